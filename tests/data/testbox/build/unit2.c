#include "sums.h"

static uint32_t table[256];

static void make_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[n] = c;
    }
}

uint32_t crc32(const unsigned char *data, size_t size) {
    if (table[1] == 0)
        make_table();
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < size; i++)
        c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}
