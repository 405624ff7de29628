#!/bin/sh
# Writes the build's facts where the QML reads them: the flavour from the project's
# environment, the architecture from Clickable's variables.
set -eu
out="$1"
printf '.pragma library\nvar flavour = "%s";\nvar arch = "%s";\nvar builtFor = "%s";\n' \
    "$APP_FLAVOUR" "$ARCH" "$BUILT_FOR" > "$out"
