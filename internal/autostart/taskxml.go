package autostart

import (
	"encoding/binary"
	"encoding/xml"
	"strings"
	"unicode/utf16"
)

// The Task Scheduler 1.2 schema: the elements hostlink's task uses, in the
// order Windows itself exports them.
type task struct {
	XMLName          xml.Name         `xml:"http://schemas.microsoft.com/windows/2004/02/mit/task Task"`
	Version          string           `xml:"version,attr"`
	RegistrationInfo registrationInfo `xml:"RegistrationInfo"`
	Triggers         triggers         `xml:"Triggers"`
	Principals       principals       `xml:"Principals"`
	Settings         taskSettings     `xml:"Settings"`
	Actions          actions          `xml:"Actions"`
}

type registrationInfo struct {
	Description string `xml:"Description"`
	URI         string `xml:"URI"`
}

type triggers struct {
	Logon logonTrigger `xml:"LogonTrigger"`
}

type logonTrigger struct {
	Enabled bool   `xml:"Enabled"`
	UserID  string `xml:"UserId,omitempty"`
}

type principals struct {
	Principal principal `xml:"Principal"`
}

type principal struct {
	ID        string `xml:"id,attr"`
	UserID    string `xml:"UserId,omitempty"`
	LogonType string `xml:"LogonType"`
	RunLevel  string `xml:"RunLevel"`
}

type taskSettings struct {
	MultipleInstancesPolicy    string           `xml:"MultipleInstancesPolicy"`
	DisallowStartIfOnBatteries bool             `xml:"DisallowStartIfOnBatteries"`
	StopIfGoingOnBatteries     bool             `xml:"StopIfGoingOnBatteries"`
	AllowHardTerminate         bool             `xml:"AllowHardTerminate"`
	StartWhenAvailable         bool             `xml:"StartWhenAvailable"`
	RunOnlyIfNetworkAvailable  bool             `xml:"RunOnlyIfNetworkAvailable"`
	AllowStartOnDemand         bool             `xml:"AllowStartOnDemand"`
	Enabled                    bool             `xml:"Enabled"`
	Hidden                     bool             `xml:"Hidden"`
	RunOnlyIfIdle              bool             `xml:"RunOnlyIfIdle"`
	WakeToRun                  bool             `xml:"WakeToRun"`
	ExecutionTimeLimit         string           `xml:"ExecutionTimeLimit"`
	Priority                   int              `xml:"Priority"`
	RestartOnFailure           restartOnFailure `xml:"RestartOnFailure"`
}

type restartOnFailure struct {
	Interval string `xml:"Interval"`
	Count    int    `xml:"Count"`
}

type actions struct {
	Context string     `xml:"Context,attr"`
	Exec    execAction `xml:"Exec"`
}

type execAction struct {
	Command   string `xml:"Command"`
	Arguments string `xml:"Arguments,omitempty"`
}

// taskXML renders the task: a logon trigger for the installing user, run
// with that user's own (non-elevated) token, no time limit, restarted on
// failure. The file is UTF-16LE with a byte order mark, as schtasks /XML
// expects.
func taskXML(s *Spec) ([]byte, error) {
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = windowsQuoteArg(a)
	}
	t := task{
		Version:          "1.2",
		RegistrationInfo: registrationInfo{Description: "hostlink local PC executor (written by hostlink install)", URI: TaskName},
		Triggers:         triggers{Logon: logonTrigger{Enabled: true, UserID: s.User}},
		Principals:       principals{Principal: principal{ID: "Author", UserID: s.User, LogonType: "InteractiveToken", RunLevel: "LeastPrivilege"}},
		Settings: taskSettings{
			MultipleInstancesPolicy: "IgnoreNew", AllowHardTerminate: true, StartWhenAvailable: true,
			AllowStartOnDemand: true, Enabled: true, ExecutionTimeLimit: "PT0S", Priority: 7,
			RestartOnFailure: restartOnFailure{Interval: "PT1M", Count: 999},
		},
		Actions: actions{Context: "Author", Exec: execAction{Command: s.Exe, Arguments: strings.Join(args, " ")}},
	}
	body, err := xml.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	doc := `<?xml version="1.0" encoding="UTF-16"?>` + "\r\n" + strings.ReplaceAll(string(body), "\n", "\r\n") + "\r\n"
	u := utf16.Encode([]rune(doc))
	out := make([]byte, 2+2*len(u))
	out[0], out[1] = 0xFF, 0xFE
	for i, c := range u {
		binary.LittleEndian.PutUint16(out[2+2*i:], c)
	}
	return out, nil
}

// windowsQuoteArg quotes one argument for CommandLineToArgvW, with the
// same result as syscall.EscapeArg on Windows: an empty argument becomes
// "", a quote is escaped with a backslash (doubling the backslashes before
// it), and an argument with a space or tab is wrapped in quotes (doubling
// the backslashes before the closing one).
func windowsQuoteArg(s string) string {
	if s == "" {
		return `""`
	}
	wrap := strings.ContainsAny(s, " \t")
	var b strings.Builder
	if wrap {
		b.WriteByte('"')
	}
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes+1))
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(c)
	}
	if wrap {
		b.WriteString(strings.Repeat(`\`, slashes))
		b.WriteByte('"')
	}
	return b.String()
}
