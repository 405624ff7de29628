import QtQuick 2.4
import Sdkapp 1.0

Rectangle {
    width: 400
    height: 600
    Text { text: Greeter.greeting }
}
