package companion

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"embed"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/companionapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/private"
	"github.com/hostlink/hostlink/internal/sqlitedb"
)

// CodeTTL is how long a pairing code can be redeemed.
const CodeTTL = 10 * time.Minute

// pairingsDB is the runtime's pairing state in its state directory.
const pairingsDB = "companions.db"

// pairingsSchema is the pairing database's schema.
//
//go:embed sql/*.sql
var pairingsSchema embed.FS

// Pairings is the runtime's record of pairing codes and paired companions.
// It holds only SHA-256 verifiers of codes and secrets, never the secrets.
// The CLI (pair-code, unpair) and the daemon open it at once; SQLite's WAL
// keeps them consistent.
type Pairings struct {
	db  *sql.DB
	now func() time.Time
}

// OpenPairings opens (creating) companions.db in stateDir.
func OpenPairings(stateDir string) (*Pairings, error) {
	if err := private.MkdirAll(stateDir); err != nil {
		return nil, err
	}
	// Every commit is synced: a revoked pairing must stay revoked.
	db, err := sqlitedb.Open(filepath.Join(stateDir, pairingsDB), sqlitedb.Options{FullSync: true, Migrations: pairingsSchema})
	if err != nil {
		return nil, fmt.Errorf("companion pairings: %w", err)
	}
	return &Pairings{db: db, now: time.Now}, nil
}

// Close closes the database.
func (p *Pairings) Close() error { return p.db.Close() }

// codeEncoding avoids characters that read alike (no 0/O, 1/I).
var codeEncoding = base32.NewEncoding("ABCDEFGHJKLMNPQRSTUVWXYZ23456789").WithPadding(base32.NoPadding)

// NewCode returns a fresh single-use pairing code, valid for CodeTTL,
// formatted XXXX-XXXX-XXXX (60 random bits).
func (p *Pairings) NewCode() (string, error) {
	b := make([]byte, 8)
	rand.Read(b)
	s := codeEncoding.EncodeToString(b)[:12]
	code := s[0:4] + "-" + s[4:8] + "-" + s[8:12]
	now := p.now()
	if _, err := p.db.Exec(`DELETE FROM codes WHERE expires_at <= ?`, now.UnixNano()); err != nil {
		return "", err
	}
	if _, err := p.db.Exec(`INSERT INTO codes (verifier, expires_at) VALUES (?, ?)`,
		verifier(normalizeCode(code)), now.Add(CodeTTL).UnixNano()); err != nil {
		return "", err
	}
	return code, nil
}

func normalizeCode(code string) string {
	return strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
}

func verifier(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Redeem consumes a pairing code and records a new companion, returning its
// credential. A wrong, used or expired code is CodeNotPaired.
func (p *Pairings) Redeem(code, name string) (Credential, error) {
	now := p.now()
	res, err := p.db.Exec(`DELETE FROM codes WHERE verifier = ? AND expires_at > ?`,
		verifier(normalizeCode(code)), now.UnixNano())
	if err != nil {
		return Credential{}, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return Credential{}, errcode.New(CodeNotPaired, "the pairing code is wrong, used or expired; run hostlink companion pair-code on the runtime for a new one")
	}
	c := Credential{ID: "cmp_" + randomToken(10), Secret: randomToken(32)}
	if len(name) > 64 {
		name = name[:64]
	}
	if _, err := p.db.Exec(`INSERT INTO companions (id, name, verifier, paired_at) VALUES (?, ?, ?, ?)`,
		c.ID, name, verifier(c.Secret), now.UnixNano()); err != nil {
		return Credential{}, err
	}
	return c, nil
}

// Verify reports whether id and secret are a current pairing, returning
// the companion's recorded name.
func (p *Pairings) Verify(id, secret string) (string, error) {
	var name, want string
	err := p.db.QueryRow(`SELECT name, verifier FROM companions WHERE id = ?`, id).Scan(&name, &want)
	if errors.Is(err, sql.ErrNoRows) {
		return "", errcode.New(CodeNotPaired, "this companion is not paired (or was unpaired); pair it again")
	}
	if err != nil {
		return "", err
	}
	if subtle.ConstantTimeCompare([]byte(verifier(secret)), []byte(want)) != 1 {
		return "", errcode.New(CodeNotPaired, "this companion is not paired (or was unpaired); pair it again")
	}
	return name, nil
}

// Paired reports whether id is still paired.
func (p *Pairings) Paired(id string) bool {
	var n int
	err := p.db.QueryRow(`SELECT count(*) FROM companions WHERE id = ?`, id).Scan(&n)
	return err == nil && n == 1
}

// Revoke deletes pairings: one id, or all when id is "". It returns how
// many it removed.
func (p *Pairings) Revoke(id string) (int, error) {
	res, err := p.db.Exec(`DELETE FROM companions WHERE ? = '' OR id = ?`, id, id)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// List returns the paired companions, oldest first.
func (p *Pairings) List() ([]companionapi.Paired, error) {
	rows, err := p.db.Query(`SELECT id, name, paired_at FROM companions ORDER BY paired_at`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []companionapi.Paired{}
	for rows.Next() {
		var c companionapi.Paired
		var at int64
		if err := rows.Scan(&c.ID, &c.Name, &at); err != nil {
			return nil, err
		}
		c.PairedAt = time.Unix(0, at)
		out = append(out, c)
	}
	return out, rows.Err()
}

// Credential is what a companion keeps after pairing.
type Credential struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

func randomToken(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}
