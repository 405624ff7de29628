/* Prints the QR code of its argument as text: its size, then one line per row. */
#include <qrencode.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    QRcode *code = QRcode_encodeString(argc > 1 ? argv[1] : "hello", 0, QR_ECLEVEL_L,
                                       QR_MODE_8, 1);
    if (code == NULL)
        return 1;
    printf("%dx%d version %d\n", code->width, code->width, code->version);
    for (int y = 0; y < code->width; y++) {
        for (int x = 0; x < code->width; x++)
            fputs(code->data[y * code->width + x] & 1 ? "##" : "  ", stdout);
        putchar('\n');
    }
    QRcode_free(code);
    return 0;
}
