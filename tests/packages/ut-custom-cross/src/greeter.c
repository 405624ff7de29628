#include <stdio.h>

int main(void) {
    puts("hello from the phone's own architecture");
    return 0;
}
