<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de">
<context>
    <name>Main</name>
    <message>
        <location filename="../app/qml/Main.qml" line="7"/>
        <source>Hello from qmake</source>
        <translation>Hallo von qmake</translation>
    </message>
</context>
</TS>
