package hostinfo

import "testing"

func TestNormalizeUUID(t *testing.T) {
	const want = "5e1c2c4a-8d0b-4c4e-9d2b-0f4b1a6c3e7d"
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "5e1c2c4a8d0b4c4e9d2b0f4b1a6c3e7d\n", want: want},   // /etc/machine-id
		{in: "5E1C2C4A-8D0B-4C4E-9D2B-0F4B1A6C3E7D", want: want}, // IOPlatformUUID
		{in: "5e1c2c4a-8d0b-4c4e-9d2b-0f4b1a6c3e7d", want: want}, // MachineGuid
		{in: "{5e1c2c4a-8d0b-4c4e-9d2b-0f4b1a6c3e7d}", want: want},
		{in: "  5E1C2C4A8D0B4C4E9D2B0F4B1A6C3E7D  ", want: want},
		{in: "", wantErr: true},
		{in: "uninitialized\n", wantErr: true},
		{in: "00000000000000000000000000000000", wantErr: true},
		{in: "00000000-0000-0000-0000-000000000000", wantErr: true},
		{in: "5e1c2c4a8d0b4c4e9d2b0f4b1a6c3e7", wantErr: true},      // 31 digits
		{in: "5e1c2c4a8d0b4c4e9d2b0f4b1a6c3e7dd", wantErr: true},    // 33 digits
		{in: "5e1c2c4a8d0b4c4e9d2b0f4b1a6c3e7g", wantErr: true},     // not hex
		{in: "5e1c2c4a-8d0b4-c4e-9d2b-0f4b1a6c3e7d", wantErr: true}, // dash misplaced
		{in: "5e1c2c4a-8d0b-4c4e-9d2b+0f4b1a6c3e7d", wantErr: true},
		{in: "{5e1c2c4a-8d0b-4c4e-9d2b-0f4b1a6c3e7d", wantErr: true},
		{in: "5e1c2c4a-8d0b-4c4e-9d2b-0f4b1a6c-e7d", wantErr: true},
	}
	for _, tt := range tests {
		got, err := NormalizeUUID(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("NormalizeUUID(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
