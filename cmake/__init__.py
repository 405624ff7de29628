"""The ClickBuild CMake package, shipped inside click-build as ``click_build.cmake``.

A package (not just a data folder) so that ``importlib.resources.files`` and
scikit-build-core's ``cmake.root`` entry point (``ClickBuild =
"click_build.cmake"``) can find this directory in a wheel and in an editable
install alike.  ``click-build --cmake-dir`` prints the same directory.
"""
