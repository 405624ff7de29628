<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr">
<context>
    <name>Main</name>
    <message>
        <location filename="../app/qml/Main.qml" line="7"/>
        <source>Hello from qmake</source>
        <translation>Bonjour de qmake</translation>
    </message>
</context>
</TS>
