/* The cost of one getppid system call in raw TSC cycles (seed 000's shape: one number per line).
 * Each line is the minimum over CALLS calls, each timed alone with rdtsc/rdtscp; with "mean", the CALLS calls
 * timed together, divided by CALLS (interrupts included: on a box whose clock counts instructions every call
 * costs the same, so only the interrupts that fall in a line make lines and boots differ).
 * Usage: getppid_cycles [LINES [CALLS [mean]]]   (default 20 lines of 200 calls, each line their minimum) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline uint64_t tsc_begin(void) {
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) :: "memory");
    return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t tsc_end(void) {
    uint32_t lo, hi, aux;
    __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) :: "memory");
    return ((uint64_t)hi << 32) | lo;
}

int main(int argc, char **argv) {
    long lines = argc > 1 ? strtol(argv[1], NULL, 10) : 20;
    long calls = argc > 2 ? strtol(argv[2], NULL, 10) : 200;
    if (lines < 1 || calls < 1)
        return 2;
    if (argc > 3 && strcmp(argv[3], "mean") == 0) {
        for (long line = 0; line < lines; line++) {
            uint64_t start = tsc_begin();
            for (long call = 0; call < calls; call++)
                syscall(SYS_getppid);
            printf("%.3f\n", (double)(tsc_end() - start) / (double)calls);
        }
        return 0;
    }
    for (long line = 0; line < lines; line++) {
        uint64_t best = UINT64_MAX;
        for (long call = 0; call < calls; call++) {
            uint64_t start = tsc_begin();
            syscall(SYS_getppid);
            uint64_t cycles = tsc_end() - start;
            if (cycles < best)
                best = cycles;
        }
        printf("%llu\n", (unsigned long long)best);
    }
    return 0;
}
