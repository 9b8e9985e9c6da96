; Inno Setup 6 script: the DocAtlas installer for Windows (x64).
;
;   iscc /DAppVersion=X.Y.Z /DSourceDir=...\dist\DocAtlas /DOutputDir=... packaging\windows\docatlas.iss
;
; build.ps1 passes the three values (the version comes from docatlas/__init__.py). Installs for
; the current user by default (no administrator rights; the person may choose all users), a
; Start menu entry, optionally a desktop icon and `docatlas` on the PATH. Uninstalling
; leaves the person's workspaces, settings and logs (in %LOCALAPPDATA%\DocAtlas) alone.

#ifndef AppVersion
  #error Pass /DAppVersion=X.Y.Z (build.ps1 does)
#endif
#ifndef SourceDir
  #error Pass /DSourceDir=<the PyInstaller folder> (build.ps1 does)
#endif
#ifndef OutputDir
  #define OutputDir "."
#endif

[Setup]
AppId={{6F1C1F1E-3A52-4C3B-9E0B-6D3A1D2F7A41}
AppName=DocAtlas
AppVersion={#AppVersion}
AppVerName=DocAtlas {#AppVersion}
AppPublisher=DocAtlas
DefaultDirName={autopf}\DocAtlas
DefaultGroupName=DocAtlas
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir={#OutputDir}
OutputBaseFilename=DocAtlas-{#AppVersion}-windows-x64-setup
SetupIconFile=..\..\resources\icons\docatlas.ico
UninstallDisplayIcon={app}\DocAtlas.exe
UninstallDisplayName=DocAtlas {#AppVersion}
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ChangesEnvironment=yes
CloseApplications=yes
VersionInfoVersion={#AppVersion}
VersionInfoProductName=DocAtlas

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Add the docatlas command to the PATH (for the command line)"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs
Source: "docatlas.cmd"; DestDir: "{app}\bin"; Flags: ignoreversion

[Icons]
Name: "{autoprograms}\DocAtlas"; Filename: "{app}\DocAtlas.exe"; AppUserModelID: "org.docatlas.DocAtlas"
Name: "{autodesktop}\DocAtlas"; Filename: "{app}\DocAtlas.exe"; Tasks: desktopicon

[Registry]
Root: HKA; Subkey: "{code:EnvironmentKey}"; ValueType: expandsz; ValueName: "Path"; \
  ValueData: "{olddata};{app}\bin"; Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}\bin'))

[Run]
Filename: "{app}\DocAtlas.exe"; Description: "{cm:LaunchProgram,DocAtlas}"; Flags: nowait postinstall skipifsilent

[Code]
function EnvironmentKey(Param: String): String;
begin
  if IsAdminInstallMode then
    Result := 'SYSTEM\CurrentControlSet\Control\Session Manager\Environment'
  else
    Result := 'Environment';
end;

function EnvironmentRoot: Integer;
begin
  if IsAdminInstallMode then Result := HKEY_LOCAL_MACHINE else Result := HKEY_CURRENT_USER;
end;

function NeedsAddPath(Dir: String): Boolean;
var
  Path: String;
begin
  if not RegQueryStringValue(EnvironmentRoot, EnvironmentKey(''), 'Path', Path) then
    Result := True
  else
    Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Path) + ';') = 0;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
var
  Path, Dir: String;
  P: Integer;
begin
  if CurUninstallStep <> usPostUninstall then
    Exit;
  Dir := ExpandConstant('{app}\bin');
  if not RegQueryStringValue(EnvironmentRoot, EnvironmentKey(''), 'Path', Path) then
    Exit;
  P := Pos(';' + Uppercase(Dir), Uppercase(Path));
  if P > 0 then
  begin
    Delete(Path, P, Length(Dir) + 1);
    RegWriteExpandStringValue(EnvironmentRoot, EnvironmentKey(''), 'Path', Path);
  end;
end;
