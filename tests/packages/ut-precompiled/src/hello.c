/* The app's program, built elsewhere (by its own CI, for each architecture) and
   committed as a binary: the project only packs it. */
#include <stdio.h>

int main(void)
{
    puts("Hello from a precompiled program");
    return 0;
}
