#include "greeter.h"

std::string greeting(const std::string &name)
{
    return "Hello, " + name + "!";
}
