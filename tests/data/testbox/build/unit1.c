#include "sums.h"

uint32_t adler32(const unsigned char *data, size_t size) {
    uint32_t a = 1, b = 0;
    while (size > 0) {
        size_t block = size < 5552 ? size : 5552;
        size -= block;
        while (block--) {
            a += *data++;
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    return (b << 16) | a;
}
