//! The `lanecast` command line (grows with the scene and CLI issues).

fn main() {
    println!("lanecast {}", env!("CARGO_PKG_VERSION"));
    println!("lanes: {}", lanecast::lanes::instruction_set());
}
