package agentcli

import "os/exec"

var execLookPath = exec.LookPath
