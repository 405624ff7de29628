#include <iostream>
#include "greeter.h"

int main()
{
    std::cout << greeting("phone") << std::endl;
    return 0;
}
