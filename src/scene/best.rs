//! The best candidate of a query so far, shared by the ray queries (key `t`), the point
//! queries (key: squared distance) and the sweeps (key: time of impact), so that all keep one
//! tie rule: the smaller key wins, and on an equal key the smaller `(geom, prim)`; and one
//! mask rule: a candidate of a geometry whose mask shares no bit with the query's is refused.

/// Which geometries a query may report: those whose mask shares a bit with the ray's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MaskFilter<'a> {
    /// Mask of each geometry, by geometry id.
    pub(crate) masks: &'a [u32],
    /// The ray's (or the query's) mask.
    pub(crate) ray: u32,
}

impl MaskFilter<'_> {
    /// True when geometry `geom` is seen.
    #[inline(always)]
    pub(crate) fn admits(&self, geom: u32) -> bool {
        self.masks[geom as usize] & self.ray != 0
    }
}

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
    /// Candidates of geometries it does not admit are refused (`None`: all admitted).
    filter: Option<MaskFilter<'a>>,
}

impl<'a, X: Copy> Best<'a, X> {
    /// Nothing found yet, refusing candidates that `filter` does not admit.
    #[inline(always)]
    pub(super) fn with_filter(limit: f32, at: X, filter: Option<MaskFilter<'a>>) -> Self {
        Self { key: limit, at, kind: u8::MAX, index: 0, ids: &[], filter }
    }
    /// True when it has a mask filter.
    pub(super) fn filtered(&self) -> bool {
        self.filter.is_some()
    }
    /// True unless the mask filter refuses candidate `ids[index]`.
    #[inline(always)]
    pub(super) fn admits(&self, ids: &[[u32; 2]], index: u32) -> bool {
        self.filter.is_none_or(|f| f.admits(ids[index as usize][0]))
    }
    /// Takes candidate `ids[index]` if its key is smaller, or equal with smaller ids
    /// (`(geom, prim)` compared as a pair).
    #[inline(always)]
    pub(super) fn offer(&mut self, key: f32, at: X, kind: u8, index: u32, ids: &'a [[u32; 2]]) {
        if (key < self.key || (key == self.key && (!self.found() || ids[index as usize] < self.ids())))
            && self.admits(ids, index)
        {
            crate::lanes::prefetch_line(&ids[index as usize]);
            self.take(key, at, kind, index, ids);
        }
    }
    /// Any-hit queries: takes candidate `ids[index]` unless the mask filter refuses it, and
    /// says whether it did. No key comparison: the kernels report only keys within the bound,
    /// and an any-hit query ends at the first candidate taken. No prefetch of its ids either
    /// (an any-hit answer does not read them).
    #[inline(always)]
    pub(super) fn take_any(&mut self, key: f32, at: X, kind: u8, index: u32, ids: &'a [[u32; 2]]) -> bool {
        let admitted = self.admits(ids, index);
        if admitted {
            self.take(key, at, kind, index, ids);
        }
        admitted
    }
    /// Makes candidate `ids[index]` the best (the one place both takers store it).
    #[inline(always)]
    fn take(&mut self, key: f32, at: X, kind: u8, index: u32, ids: &'a [[u32; 2]]) {
        (self.key, self.at, self.kind, self.index, self.ids) = (key, at, kind, index, ids);
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
        let mut b = Best::with_filter(10.0, (), None);
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
