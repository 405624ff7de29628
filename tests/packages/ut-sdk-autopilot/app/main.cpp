#include <cstdio>

int main() {
    std::puts("sdkapp");
    return 0;
}
