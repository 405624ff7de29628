#include <cstdio>

int main() {
    std::puts("Own framework");
    return 0;
}
