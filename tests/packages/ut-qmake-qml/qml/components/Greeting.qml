import QtQuick 2.7

Text {
    font.pixelSize: 24
}
