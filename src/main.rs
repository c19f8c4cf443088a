//! The `lanecast` command line (grows with the scene and CLI issues).

fn main() {
    println!(
        "lanecast {} — lanes: {}",
        env!("CARGO_PKG_VERSION"),
        lanecast::lanes::instruction_set()
    );
}
