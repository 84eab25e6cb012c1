/* Checksums of a buffer, one family per unit (seed 002's build on a test box). */
#include <stddef.h>
#include <stdint.h>

uint32_t adler32(const unsigned char *data, size_t size);
uint32_t crc32(const unsigned char *data, size_t size);
uint64_t fnv1a64(const unsigned char *data, size_t size);
uint32_t murmur3_32(const unsigned char *data, size_t size, uint32_t seed);
