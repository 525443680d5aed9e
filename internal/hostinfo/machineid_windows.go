package hostinfo

import (
	"fmt"

	"golang.org/x/sys/windows/registry"
)

func machineID() (string, error) {
	// WOW64_64KEY reads the native registry view even from an emulated or
	// 32-bit process, whose redirected view has no MachineGuid.
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SOFTWARE\Microsoft\Cryptography`, registry.QUERY_VALUE|registry.WOW64_64KEY)
	if err != nil {
		return "", fmt.Errorf("hostinfo: open Cryptography key: %w", err)
	}
	defer k.Close()
	guid, _, err := k.GetStringValue("MachineGuid")
	if err != nil {
		return "", fmt.Errorf("hostinfo: read MachineGuid: %w", err)
	}
	return NormalizeUUID(guid)
}
