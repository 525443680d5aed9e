package procs

import "strings"

// QuotePOSIX joins args into one line for sh, bash or zsh that those shells
// split back into exactly args: words made only of safe characters stay as
// they are, everything else goes in single quotes, each single quote inside
// written as quote, backslash, quote, quote. A word starting with = or % is
// quoted too: zsh expands =cmd to a path, and % at the start of a command
// names a job.
func QuotePOSIX(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.Trim(a, posixSafe) == "" && a[0] != '=' && a[0] != '%' {
			b.WriteString(a)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}

const posixSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-"

// QuoteWindows joins args into a Windows command line that
// CommandLineToArgvW (and so the C runtime and Go) splits back into exactly
// args, the rules of Python's subprocess.list2cmdline: an argument that is
// empty or has a space, tab, newline or double quote is quoted; a quote is
// written \"; backslashes are doubled only where they precede a quote.
// args[0] is the program name, which Windows splits without backslash
// escapes, so it must not contain a double quote.
func QuoteWindows(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteWindowsArg(a))
	}
	return b.String()
}

func quoteWindowsArg(a string) string { return windowsArg(a, false) }

// windowsArg quotes a by the CommandLineToArgvW rules. With quotePercent,
// each run of "%" is also put between double quotes, which close (or open)
// the quoted part and open (or close) it again, leaving the argument
// unchanged; a run is quoted as a whole because "" inside quotes would be
// a literal quote.
func windowsArg(a string, quotePercent bool) string {
	quoted := a == "" || strings.ContainsAny(a, " \t\n\v\"")
	if !quoted && !(quotePercent && strings.Contains(a, "%")) {
		return a
	}
	var b strings.Builder
	if quoted {
		b.WriteByte('"')
	}
	slashes := 0
	for i := 0; i < len(a); i++ {
		c := a[i]
		switch {
		case c == '\\':
			slashes++
			continue
		case c == '"':
			b.WriteString(strings.Repeat(`\`, 2*slashes+1))
			b.WriteByte('"')
		case c == '%' && quotePercent:
			j := i
			for j < len(a) && a[j] == '%' {
				j++
			}
			b.WriteString(strings.Repeat(`\`, 2*slashes))
			b.WriteString(`"` + a[i:j] + `"`)
			i = j - 1
		default:
			b.WriteString(strings.Repeat(`\`, slashes))
			b.WriteByte(c)
		}
		slashes = 0
	}
	if quoted {
		b.WriteString(strings.Repeat(`\`, 2*slashes))
		b.WriteByte('"')
	} else {
		b.WriteString(strings.Repeat(`\`, slashes))
	}
	return b.String()
}

// QuoteCmd joins args into a line for cmd.exe that runs args[0] with
// exactly args[1:]. Each argument is written as QuoteWindows would, except
// that every run of "%" is wrapped in its own pair of double quotes (a
// quote pair that CommandLineToArgvW removes again), and then every cmd.exe
// metacharacter, double quotes included, gets a caret. With no quote left
// unescaped cmd.exe never enters quoted mode and removes every caret; and
// %NAME% is never expanded, because cmd.exe (and Wine's, which removes
// carets before expanding) sees a variable name that begins and ends with
// a quote. args[0] is put in plain quotes so that cmd.exe finds the program
// even if its path has spaces; it must contain none of " %. No argument may
// contain a carriage return or line feed, which end a cmd.exe command.
func QuoteCmd(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i == 0 {
			b.WriteString(`"` + a + `"`)
			continue
		}
		b.WriteByte(' ')
		for _, c := range windowsArg(a, true) {
			if strings.ContainsRune(`()%!^"<>&|`, c) {
				b.WriteByte('^')
			}
			b.WriteRune(c)
		}
	}
	return b.String()
}

// QuotePowerShell joins args into a PowerShell command that invokes
// args[0] with exactly args[1:]: each word in single quotes (literal in
// PowerShell: no $ or backtick expansion), a quote inside doubled, and the
// call operator & in front so a quoted program name is run, not printed.
func QuotePowerShell(args []string) string {
	var b strings.Builder
	b.WriteString("&")
	for _, a := range args {
		b.WriteString(" '")
		b.WriteString(strings.ReplaceAll(a, "'", "''"))
		b.WriteByte('\'')
	}
	return b.String()
}

// Line joins argv into a command line for the named shell that runs
// argv[0] with exactly argv[1:], with that shell's quoting. It is how argv
// runs "inside" a chosen shell, so shell builtins (cmd's dir, echo) and
// the shell's own program lookup apply while the arguments stay exact.
func Line(shell string, argv []string) (string, error) {
	sh, err := ResolveShell(shell)
	if err != nil {
		return "", err
	}
	return lineFor(sh.Name, argv), nil
}

func lineFor(shell string, argv []string) string {
	switch shell {
	case "cmd":
		return QuoteCmd(argv)
	case "powershell", "pwsh":
		return QuotePowerShell(argv)
	default:
		return QuotePOSIX(argv)
	}
}
