#include <cstdio>
#define tr(s) (s)

int main() {
    std::puts(tr("Hello from a legacy app"));
    return 0;
}
