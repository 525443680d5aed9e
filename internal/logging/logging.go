package logging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hostlink/hostlink/internal/private"
)

// FileName is the log file in the log directory.
const FileName = "hostlink.log"

// Options configure Open.
type Options struct {
	Dir          string // the log directory
	Level        string // debug, info, warn, error (default info)
	MaxFileBytes int64  // rotation size (default 10 MiB)
	Keep         int    // rotated files kept (default 3)
	// Getenv reads JOURNAL_STREAM (default os.Getenv); Stderr is the
	// process's standard error (default os.Stderr).
	Getenv func(string) string
	Stderr *os.File
}

// Logger is an open log.
type Logger struct {
	*slog.Logger
	// Where says where the log goes, for people ("journal", or the file).
	Where string
	file  *rotator
}

// Close closes the log file, if any.
func (l *Logger) Close() error {
	if l.file != nil {
		return l.file.Close()
	}
	return nil
}

// ParseLevel maps a config level name to a slog level.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("log level %q: use debug, info, warn or error", s)
}

// Open sets up the log as the package doc describes.
func Open(o Options) (*Logger, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 10 << 20
	}
	if o.Keep <= 0 {
		o.Keep = 3
	}
	level, err := ParseLevel(o.Level)
	if err != nil {
		return nil, err
	}
	hopts := &slog.HandlerOptions{Level: level, ReplaceAttr: redact}
	if IsJournal(o.Getenv("JOURNAL_STREAM"), o.Stderr) {
		return &Logger{Logger: slog.New(newJournalHandler(o.Stderr, level)), Where: "journal"}, nil
	}
	if o.Dir == "" {
		return nil, errors.New("logging: no log directory")
	}
	if err := private.MkdirAll(o.Dir); err != nil {
		return nil, fmt.Errorf("log directory: %w", err)
	}
	path := filepath.Join(o.Dir, FileName)
	rot, err := openRotator(path, o.MaxFileBytes, o.Keep)
	if err != nil {
		return nil, err
	}
	var h slog.Handler = slog.NewJSONHandler(rot, hopts)
	if isTerminal(o.Stderr) {
		h = fanout{h, slog.NewTextHandler(o.Stderr, hopts)}
	}
	return &Logger{Logger: slog.New(h), Where: path, file: rot}, nil
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// secretKeys are attribute name parts that mark a secret.
var secretKeys = []string{"token", "secret", "password", "passphrase", "authorization", "cookie", "credential"}

// redact replaces secret attributes (by name) and bearer-looking values.
func redact(groups []string, a slog.Attr) slog.Attr {
	k := strings.ToLower(a.Key)
	for _, s := range secretKeys {
		if strings.Contains(k, s) {
			return slog.String(a.Key, "[redacted]")
		}
	}
	if a.Value.Kind() == slog.KindString {
		v := a.Value.String()
		if lv := strings.ToLower(v); strings.Contains(lv, "bearer ") || strings.Contains(lv, "access_token=") || strings.Contains(lv, "refresh_token=") {
			return slog.String(a.Key, "[redacted]")
		}
	}
	return a
}

// fanout sends each record to every handler that wants it.
type fanout []slog.Handler

func (f fanout) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range f {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (f fanout) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, h := range f {
		if h.Enabled(ctx, r.Level) {
			errs = append(errs, h.Handle(ctx, r.Clone()))
		}
	}
	return errors.Join(errs...)
}

func (f fanout) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (f fanout) WithGroup(name string) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithGroup(name)
	}
	return out
}

// journalHandler writes "<P>msg key=value …" lines: journald reads the
// syslog priority P and stamps the time itself.
type journalHandler struct {
	slog.Handler
	lw *prioWriter
}

// prioWriter prefixes each record's line with the priority of the record
// being written; the handler sets it under mu.
type prioWriter struct {
	mu   sync.Mutex
	w    io.Writer
	prio int
}

func (p *prioWriter) Write(b []byte) (int, error) {
	if _, err := fmt.Fprintf(p.w, "<%d>", p.prio); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}

func newJournalHandler(w io.Writer, level slog.Level) *journalHandler {
	lw := &prioWriter{w: w}
	h := slog.NewTextHandler(lw, &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
			return slog.Attr{}
		}
		return redact(groups, a)
	}})
	return &journalHandler{Handler: h, lw: lw}
}

// priority maps a level to syslog's: error 3, warning 4, info 6, debug 7.
func priority(l slog.Level) int {
	switch {
	case l >= slog.LevelError:
		return 3
	case l >= slog.LevelWarn:
		return 4
	case l >= slog.LevelInfo:
		return 6
	}
	return 7
}

func (j *journalHandler) Handle(ctx context.Context, r slog.Record) error {
	j.lw.mu.Lock()
	defer j.lw.mu.Unlock()
	j.lw.prio = priority(r.Level)
	return j.Handler.Handle(ctx, r)
}

func (j *journalHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &journalHandler{Handler: j.Handler.WithAttrs(as), lw: j.lw}
}

func (j *journalHandler) WithGroup(name string) slog.Handler {
	return &journalHandler{Handler: j.Handler.WithGroup(name), lw: j.lw}
}
