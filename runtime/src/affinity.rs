//! Pinning SM threads (and other pools of compute threads, such as the
//! benchmark baselines' rayon workers) to CPUs of their own.
//!
//! A launch wakes its SM threads, and Linux tends to queue woken threads
//! on the waker's CPU. Measured on a 2-core virtual machine, a 2-SM
//! runtime often had both SM threads on one CPU: the second started only
//! when the load balancer moved it at a scheduler tick, about 4 ms later,
//! after the first had done most of the launch (W1: median start of the
//! later SM 3.7 ms unpinned, 54 µs pinned). So when a runtime has one SM
//! per CPU the process may use (as by default) and more than one, SM `i`
//! is pinned to the `i`-th of those CPUs. Any other runtime is left to the
//! scheduler: pinned to the first CPUs, the SMs of several small runtimes
//! (or processes) would crowd onto the same few CPUs of a large machine.

/// The CPUs a pool of `threads` compute threads is pinned to, thread `i`
/// to `cpus[i]`; empty when they are not pinned. The SM threads of a
/// runtime follow this rule.
pub fn placement(threads: u32) -> Vec<usize> {
    let cpus = allowed_cpus();
    if threads > 1 && threads as usize == cpus.len() {
        cpus
    } else {
        Vec::new()
    }
}

#[cfg(target_os = "linux")]
mod os {
    /// `cpu_set_t`: 1024 bits.
    pub type CpuSet = [u64; 16];

    extern "C" {
        fn sched_getaffinity(pid: i32, size: usize, mask: *mut CpuSet) -> i32;
        fn sched_setaffinity(pid: i32, size: usize, mask: *const CpuSet) -> i32;
    }

    pub fn allowed_cpus() -> Vec<usize> {
        let mut set: CpuSet = [0; 16];
        // SAFETY: `set` is a writable `cpu_set_t` of the size passed; pid 0
        // is the calling thread.
        let status = unsafe { sched_getaffinity(0, size_of::<CpuSet>(), &mut set) };
        if status != 0 {
            return Vec::new();
        }
        (0..set.len() * 64)
            .filter(|&cpu| set[cpu / 64] >> (cpu % 64) & 1 == 1)
            .collect()
    }

    pub fn pin_current_thread(cpu: usize) -> bool {
        if cpu >= 16 * 64 {
            return false;
        }
        let mut set: CpuSet = [0; 16];
        set[cpu / 64] = 1 << (cpu % 64);
        // SAFETY: `set` is a `cpu_set_t` of the size passed; pid 0 is the
        // calling thread.
        unsafe { sched_setaffinity(0, size_of::<CpuSet>(), &set) == 0 }
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    pub fn allowed_cpus() -> Vec<usize> {
        Vec::new()
    }

    pub fn pin_current_thread(_cpu: usize) -> bool {
        false
    }
}

/// The CPUs the calling thread may run on, in increasing order (empty
/// where that is not known).
pub fn allowed_cpus() -> Vec<usize> {
    os::allowed_cpus()
}

/// Pins the calling thread to `cpu`; false if the system refused (the
/// thread then runs wherever the scheduler puts it, which is only slower).
pub fn pin_current_thread(cpu: usize) -> bool {
    os::pin_current_thread(cpu)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_may_run_on_its_cpu_only() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        let last = *cpus.last().expect("a CPU");
        let seen = std::thread::spawn(move || (pin_current_thread(last), allowed_cpus()))
            .join()
            .expect("the thread ran");
        assert_eq!(seen, (true, vec![last]));
        // The test thread itself is not affected.
        assert_eq!(allowed_cpus(), cpus);
    }

    #[test]
    fn only_runtimes_of_one_sm_per_cpu_are_pinned() {
        let cpus = allowed_cpus();
        let count = cpus.len() as u32;
        assert!(placement(1).is_empty());
        assert!(placement(count + 1).is_empty());
        if count >= 2 {
            assert_eq!(placement(count), cpus);
            assert!(placement(count - 1).is_empty());
        }
    }
}
