function greeting() {
    return "Hello from a pure QML qmake app";
}
