// The solver's lists: plain values on memory the solver owns.

/// A growable list of plain values on memory its owner allocates and frees:
/// no copy on write and no reference count, so that the deductive loop's
/// many small reads and writes are plain loads and stores.
///
/// A `SolverList` is a view: a copy shares the elements, and growing one
/// copy (``append(_:)`` past its capacity) moves them and leaves the other
/// copies pointing at freed memory. ``SolverCore`` keeps one copy of each
/// list as its own and frees it in its `deinit`; a method that takes a
/// list out to work on (a scratch list) puts it back before anything else
/// can use it.
struct SolverList<Element: BitwiseCopyable> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count: Int
    private var capacity: Int

    /// An empty list with room for `capacity` elements (at least 16).
    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
        count = 0
    }

    /// A list of `count` copies of `value`.
    init(repeating value: Element, count: Int) {
        self.init(capacity: count)
        base.initialize(repeating: value, count: count)
        self.count = count
    }

    /// A list holding `elements`.
    init(_ elements: [Element]) {
        self.init(capacity: elements.count)
        for element in elements { append(element) }
    }

    var isEmpty: Bool { count == 0 }

    /// The element at `i`, which must be below ``count`` (checked in debug
    /// builds, so that the tests catch a solver that reads past a list).
    subscript(i: Int) -> Element {
        @inline(__always) unsafeAddress {
            assert(i >= 0 && i < count, "solver list index out of range")
            return UnsafePointer(base + i)
        }
        @inline(__always) nonmutating unsafeMutableAddress {
            assert(i >= 0 && i < count, "solver list index out of range")
            return base + i
        }
    }

    @inline(__always) mutating func append(_ value: Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: value)
        count += 1
    }

    private mutating func grow() {
        let bigger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity *= 2
    }

    @inline(__always) mutating func popLast() -> Element? {
        guard count > 0 else { return nil }
        count -= 1
        return base[count]
    }

    /// Removes the last element, which must exist (checked in debug builds).
    @inline(__always) mutating func removeLast() -> Element {
        assert(count > 0, "removeLast on an empty solver list")
        count -= 1
        return base[count]
    }

    /// Empties the list, keeping its memory.
    mutating func removeAll() { count = 0 }

    /// The elements, copied out.
    var array: [Element] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// Frees the memory; the owner calls it once, on its last copy.
    func deallocate() { base.deallocate() }
}
