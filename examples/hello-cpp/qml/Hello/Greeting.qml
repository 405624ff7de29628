import QtQuick 2.7

Text {
    text: i18n.tr("Hello, world!")
    font.pixelSize: 24
}
