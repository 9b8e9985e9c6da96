@echo off
rem `docatlas` on the PATH (the installer's "Add to PATH" task): the console executable.
"%~dp0..\docatlas-cli.exe" %*
