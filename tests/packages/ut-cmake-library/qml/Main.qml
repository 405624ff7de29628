import QtQuick 2.7
Rectangle { width: 360; height: 640 }
