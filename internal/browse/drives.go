package browse

import "strings"

// Drive is what Windows reports about one drive letter.
type Drive struct {
	// Root is the drive's root directory, "C:\".
	Root string
	// Type is GetDriveTypeW's answer (DriveFixed, DriveRemovable, ...).
	Type uint32
	// Attributes are the root directory's file attributes.
	Attributes uint32
	// Label is the volume label from GetVolumeInformationW.
	Label string
	// Ready is false when GetVolumeInformationW failed: no medium in the
	// drive, or a volume that cannot be read.
	Ready bool
}

// Drive types of GetDriveTypeW.
const (
	DriveRemovable = 2
	DriveFixed     = 3
	DriveRemote    = 4
	DriveCDROM     = 5
	DriveRAMDisk   = 6
)

// attrReparsePoint is FILE_ATTRIBUTE_REPARSE_POINT.
const attrReparsePoint = 0x400

// systemLabels are the labels Windows setup and OEMs give recovery, EFI
// and reserved partitions when they get a drive letter.
var systemLabels = map[string]bool{
	"recovery":        true,
	"system reserved": true,
	"system":          true,
	"efi":             true,
	"winre":           true,
	"winretools":      true,
}

// driveAllowed reports whether a drive is a browse root: a ready fixed or
// removable drive whose root is not a reparse point and whose label is not
// that of a recovery or system partition. Remote, optical and RAM drives
// are excluded.
func driveAllowed(d Drive) bool {
	if !d.Ready || (d.Type != DriveFixed && d.Type != DriveRemovable) {
		return false
	}
	if d.Attributes&attrReparsePoint != 0 {
		return false
	}
	return !systemLabels[strings.ToLower(strings.TrimSpace(d.Label))]
}
