import CMalloc

/// Settings of the process's memory allocator (glibc's).
public enum ProcessMemory {
    /// glibc's initial mmap threshold, kept for good.
    public static let mappedBlockThreshold: Int32 = 128 * 1024

    /// Keeps blocks of `mappedBlockThreshold` and more mapped on their own, unmapped when freed. glibc raises
    /// its threshold to the size of each mapped block freed, and blocks of that size then come from the
    /// thread's arena, which keeps them: in bench/daemon.sh soak, a 264 KiB block freed a few receiver hours
    /// in was followed by 0.7 MiB more arena that stayed (+4.7 % of `run`'s private memory; with the threshold
    /// fixed, at most +1.8 %, and 0.7 % below hour 1 at the end). The threshold decides only when the arena
    /// has no free space for a block, so no unit test can see it in a process that has run others; the soak
    /// does. For a process that runs for months. False when glibc refused.
    @discardableResult
    public static func keepLargeBlocksMapped() -> Bool {
        lodestar_malloc_fix_mmap_threshold(mappedBlockThreshold) == 1
    }
}
