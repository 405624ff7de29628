#include <cstdio>

int main() {
    std::puts("prefixapp");
    return 0;
}
