//! The best candidate of a query so far, shared by the ray queries (key `t`) and the point
//! queries (key: squared distance), so that both keep one tie rule: the smaller key wins, and
//! on an equal key the smaller `(geom, prim)`.

/// The best candidate so far, before its answer record is made. Its ids are looked up only
/// when needed (a tie, or the final answer): `ids[index]` of the table of its kind. Loading
/// them for every candidate cost a cache miss per hit on incoherent rays.
#[derive(Clone, Copy, Debug)]
pub(super) struct Best<'a, X: Copy> {
    /// The candidate's `t` (rays) or squared distance (points); the bound before one is found.
    pub(super) key: f32,
    /// What the answer needs besides the ids: `(u, v)` for rays, `(point, u, v)` for points.
    pub(super) at: X,
    /// Kind of the primitive (`u8::MAX` while nothing is found).
    pub(super) kind: u8,
    /// Index into `ids`.
    pub(super) index: u32,
    ids: &'a [[u32; 2]],
}

impl<'a, X: Copy> Best<'a, X> {
    /// Nothing found yet; candidates with a key up to `limit` are accepted.
    pub(super) fn new(limit: f32, at: X) -> Self {
        Self { key: limit, at, kind: u8::MAX, index: 0, ids: &[] }
    }
    /// Takes candidate `ids[index]` if its key is smaller, or equal with smaller ids
    /// (`(geom, prim)` compared as a pair).
    #[inline(always)]
    pub(super) fn offer(&mut self, key: f32, at: X, kind: u8, index: u32, ids: &'a [[u32; 2]]) {
        if key < self.key || (key == self.key && (!self.found() || ids[index as usize] < self.ids())) {
            crate::lanes::prefetch_line(&ids[index as usize]);
            *self = Best { key, at, kind, index, ids };
        }
    }
    /// True once a candidate was taken.
    pub(super) fn found(&self) -> bool {
        self.kind != u8::MAX
    }
    /// `[geom, prim]` of the candidate (only when found).
    pub(super) fn ids(&self) -> [u32; 2] {
        self.ids[self.index as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::Best;

    #[test]
    fn smaller_key_then_smaller_ids_win() {
        let ids = [[2, 0], [1, 5], [1, 4]];
        let mut b = Best::new(10.0, ());
        assert!(!b.found());
        b.offer(11.0, (), 0, 0, &ids); // beyond the limit
        assert!(!b.found());
        b.offer(10.0, (), 0, 0, &ids); // at the limit: taken
        assert_eq!((b.key, b.ids()), (10.0, [2, 0]));
        b.offer(3.0, (), 0, 1, &ids);
        assert_eq!((b.key, b.ids()), (3.0, [1, 5]));
        b.offer(3.0, (), 0, 0, &ids); // equal key, larger ids
        assert_eq!(b.ids(), [1, 5]);
        b.offer(3.0, (), 1, 2, &ids); // equal key, smaller ids
        assert_eq!((b.ids(), b.kind), ([1, 4], 1));
    }
}
