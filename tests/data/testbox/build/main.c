#include <stdio.h>
#include <string.h>

#include "sums.h"

int main(int argc, char **argv) {
    const char *text = argc > 1 ? argv[1] : "abstat";
    const unsigned char *data = (const unsigned char *)text;
    size_t size = strlen(text);
    printf("adler32 %08x crc32 %08x fnv1a64 %016llx murmur3 %08x\n", adler32(data, size), crc32(data, size),
           (unsigned long long)fnv1a64(data, size), murmur3_32(data, size, 0));
    return 0;
}
