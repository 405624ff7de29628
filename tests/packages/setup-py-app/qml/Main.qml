import QtQuick 2.7
Rectangle { width: 100; height: 100 }
