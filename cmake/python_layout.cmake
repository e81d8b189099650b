# Where the stepscope Python package and the `stepscope` command are installed, decided once
# for python/CMakeLists.txt (the package) and src/cli (the command, which must find the package
# it came with: src/launcher/python_startup.h).
#
# - A wheel (`pip install .`, scikit-build-core sets SKBUILD): the package goes to the wheel's
#   platlib (the install prefix) and the command to its scripts folder, which pip installs into
#   <env>/lib/pythonX.Y/site-packages and <env>/bin. The command reaches the package by the
#   relative path between those two folders of the building interpreter (sysconfig).
# - `cmake --install` (scripts/setup.sh, into /usr/local): the package goes where the
#   interpreter imports from with no environment variables. Debian's interpreter imports from
#   /usr/local/lib/python3.X/dist-packages, not from the site-packages that sysconfig names, so
#   take that directory from sys.path and keep only its part below /usr/local; elsewhere fall
#   back to sysconfig's platlib below its prefix.
#
# Sets STEPSCOPE_PYTHON_INSTALL_DIR (relative to the install prefix), STEPSCOPE_CLI_INSTALL_DIR
# and STEPSCOPE_PYTHON_PACKAGE_FROM_CLI (the package's parent folder relative to the installed
# command's folder).
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)

if(SKBUILD)
  set(STEPSCOPE_PYTHON_INSTALL_DIR ".")
  set(STEPSCOPE_CLI_INSTALL_DIR "${SKBUILD_SCRIPTS_DIR}")
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c
            "import os, sysconfig; print(os.path.relpath(sysconfig.get_path('platlib'), sysconfig.get_path('scripts')))"
    OUTPUT_VARIABLE STEPSCOPE_PYTHON_PACKAGE_FROM_CLI
    OUTPUT_STRIP_TRAILING_WHITESPACE
    COMMAND_ERROR_IS_FATAL ANY)
  return()
endif()

execute_process(
  COMMAND ${Python3_EXECUTABLE} -c [=[
import os, sys, sysconfig
for entry in sys.path:
    if entry.startswith('/usr/local/lib/python3') and entry.endswith('dist-packages'):
        print(os.path.relpath(entry, '/usr/local'))
        break
else:
    print(os.path.relpath(sysconfig.get_path('platlib'), sysconfig.get_config_var('platbase')))
]=]
  OUTPUT_VARIABLE _stepscope_relative_site_dir
  OUTPUT_STRIP_TRAILING_WHITESPACE
  COMMAND_ERROR_IS_FATAL ANY)
set(STEPSCOPE_PYTHON_INSTALL_DIR "${_stepscope_relative_site_dir}" CACHE STRING
    "Where the stepscope package is installed, relative to CMAKE_INSTALL_PREFIX (or absolute)")
set(STEPSCOPE_CLI_INSTALL_DIR "${CMAKE_INSTALL_BINDIR}")
cmake_path(ABSOLUTE_PATH STEPSCOPE_PYTHON_INSTALL_DIR BASE_DIRECTORY "${CMAKE_INSTALL_PREFIX}"
           OUTPUT_VARIABLE _stepscope_package_parent)
cmake_path(ABSOLUTE_PATH STEPSCOPE_CLI_INSTALL_DIR BASE_DIRECTORY "${CMAKE_INSTALL_PREFIX}"
           OUTPUT_VARIABLE _stepscope_cli_dir)
file(RELATIVE_PATH STEPSCOPE_PYTHON_PACKAGE_FROM_CLI "${_stepscope_cli_dir}" "${_stepscope_package_parent}")
