/*
 * bcryptprimitives.dll shim for running Go 1.26 Windows test binaries under
 * Wine 8 (Debian 12). Test infrastructure only; never shipped.
 *
 * 1. ProcessPrng. The Go runtime (and crypto/internal/sysrand) import
 *    ProcessPrng from bcryptprimitives.dll, which Wine 8 lacks, so every Go
 *    binary dies in runtime.osinit ("fatal error: bcryptprimitives.dll not
 *    found"). We forward it to SystemFunction036 (RtlGenRandom) in advapi32,
 *    which Wine implements with the host's CSPRNG.
 *
 * 2. NtSetInformationFile(FileDispositionInformationEx). Go 1.26's
 *    os.RemoveAll (and so testing.T.TempDir's cleanup) deletes through
 *    internal/syscall/windows.Deleteat, which first tries
 *    FileDispositionInformationEx (class 64) and falls back to the classic
 *    FileDispositionInformation only on STATUS_INVALID_INFO_CLASS /
 *    STATUS_INVALID_PARAMETER / STATUS_NOT_SUPPORTED. Wine 8 answers
 *    STATUS_NOT_IMPLEMENTED, which Go reports as "Invalid function." and
 *    every RemoveAll fails. Real Windows answers STATUS_INVALID_INFO_CLASS
 *    for classes it does not know, so we do the same: when this DLL is
 *    loaded (the Go runtime loads it in osinit, before any user code) we
 *    point ntdll's export of NtSetInformationFile at a wrapper that maps
 *    STATUS_NOT_IMPLEMENTED to STATUS_INVALID_INFO_CLASS. Go resolves ntdll
 *    functions lazily with GetProcAddress, so it picks up the wrapper; calls
 *    from other DLLs through their import tables are untouched.
 *
 * 3. CreateSymbolicLinkW. Wine 8's is a stub that returns TRUE and creates
 *    nothing (no reparse-point support), so os.Symlink "succeeds" and the
 *    link is simply missing, which breaks symlink tests in confusing ways.
 *    We make it fail with ERROR_PRIVILEGE_NOT_HELD, as Windows does for a
 *    user without SeCreateSymbolicLinkPrivilege / Developer Mode, so tests
 *    can detect "no symlinks here" and skip.
 *    (HOSTLINK_WINE_REAL_SYMLINK_STUB=1 keeps Wine's stub.)
 *
 * HOSTLINK_WINE_NO_PATCH=1 disables fixes 2 and 3 (ProcessPrng stays).
 *
 * Built by .ci/wine-test with:
 *   x86_64-w64-mingw32-gcc -shared -O2 -s -nostdlib -Wl,-e,DllMain \
 *       -o bcryptprimitives.dll bcryptprimitives.c bcryptprimitives.def \
 *       -lkernel32 -ladvapi32
 */
#include <windows.h>

/* RtlGenRandom; <ntsecapi.h> declares it via a macro, so declare it directly. */
DECLSPEC_IMPORT BOOLEAN WINAPI SystemFunction036(PVOID RandomBuffer, ULONG RandomBufferLength);

BOOL WINAPI ProcessPrng(PBYTE pbData, SIZE_T cbData)
{
	while (cbData > 0) {
		ULONG n = cbData > 0x40000000 ? 0x40000000 : (ULONG)cbData;
		if (!SystemFunction036(pbData, n))
			return FALSE;
		pbData += n;
		cbData -= n;
	}
	return TRUE; /* the real ProcessPrng always returns TRUE */
}

/* ---- export patching ---- */

static int str_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

static int env_set(const char *name)
{
	char buf[8];
	DWORD n = GetEnvironmentVariableA(name, buf, sizeof buf);
	return n > 0 && n < sizeof buf && buf[0] != '0';
}

/*
 * patch_export points the export `name` of module `mod` at `wrapper` and
 * stores the previous address in *orig. Export entries are 32-bit RVAs from
 * the module's base, so the wrapper is reached through a small stub placed
 * less than 4 GiB above the module. Only later GetProcAddress lookups are
 * affected (Go resolves Windows APIs lazily that way); import tables that
 * were already bound are untouched.
 */
static int patch_export(const char *module, const char *name, void *wrapper, void **orig)
{
	BYTE *base = (BYTE *)GetModuleHandleA(module);
	if (!base)
		return 0;
	IMAGE_DOS_HEADER *dos = (IMAGE_DOS_HEADER *)base;
	IMAGE_NT_HEADERS64 *nt = (IMAGE_NT_HEADERS64 *)(base + dos->e_lfanew);
	IMAGE_DATA_DIRECTORY dir = nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
	if (!dir.VirtualAddress)
		return 0;
	IMAGE_EXPORT_DIRECTORY *exp = (IMAGE_EXPORT_DIRECTORY *)(base + dir.VirtualAddress);
	DWORD *names = (DWORD *)(base + exp->AddressOfNames);
	WORD *ords = (WORD *)(base + exp->AddressOfNameOrdinals);
	DWORD *funcs = (DWORD *)(base + exp->AddressOfFunctions);
	DWORD i;
	for (i = 0; i < exp->NumberOfNames; i++)
		if (str_eq((const char *)(base + names[i]), name))
			break;
	if (i == exp->NumberOfNames)
		return 0;
	DWORD *slot = &funcs[ords[i]];
	if (orig) {
		/* Resolve through GetProcAddress so forwarded exports work too. */
		*orig = (void *)GetProcAddress((HMODULE)base, name);
		if (!*orig)
			return 0;
	}

	ULONG_PTR lo = ((ULONG_PTR)base + nt->OptionalHeader.SizeOfImage + 0xFFFF) & ~(ULONG_PTR)0xFFFF;
	ULONG_PTR hi = (ULONG_PTR)base + 0xFFFF0000UL;
	BYTE *stub = NULL;
	for (ULONG_PTR a = lo; a < hi && !stub; a += 0x10000)
		stub = VirtualAlloc((LPVOID)a, 4096, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
	if (!stub)
		return 0;
	/* mov rax, imm64 ; jmp rax */
	ULONG_PTR target = (ULONG_PTR)wrapper;
	stub[0] = 0x48;
	stub[1] = 0xB8;
	for (int b = 0; b < 8; b++)
		stub[2 + b] = (BYTE)(target >> (8 * b));
	stub[10] = 0xFF;
	stub[11] = 0xE0;
	DWORD old;
	if (!VirtualProtect(stub, 4096, PAGE_EXECUTE_READ, &old))
		return 0;
	FlushInstructionCache(GetCurrentProcess(), stub, 12);

	if (!VirtualProtect(slot, sizeof *slot, PAGE_READWRITE, &old))
		return 0;
	*slot = (DWORD)((ULONG_PTR)stub - (ULONG_PTR)base);
	VirtualProtect(slot, sizeof *slot, old, &old);
	return 1;
}

/* ---- fix 2: NtSetInformationFile status ---- */

#define HL_STATUS_NOT_IMPLEMENTED    ((LONG)0xC0000002L)
#define HL_STATUS_INVALID_INFO_CLASS ((LONG)0xC0000003L)

typedef LONG (NTAPI *nt_set_info_file_fn)(HANDLE, PVOID, PVOID, ULONG, ULONG);
static nt_set_info_file_fn real_nt_set_info_file;

static LONG NTAPI hl_nt_set_info_file(HANDLE h, PVOID iosb, PVOID info, ULONG len, ULONG cls)
{
	LONG st = real_nt_set_info_file(h, iosb, info, len, cls);
	if (st == HL_STATUS_NOT_IMPLEMENTED)
		st = HL_STATUS_INVALID_INFO_CLASS;
	return st;
}

/* ---- fix 3: CreateSymbolicLinkW ---- */

static BOOLEAN WINAPI hl_create_symlink_w(LPCWSTR link, LPCWSTR target, DWORD flags)
{
	(void)link;
	(void)target;
	(void)flags;
	SetLastError(ERROR_PRIVILEGE_NOT_HELD);
	return FALSE;
}

static void apply_patches(void)
{
	if (env_set("HOSTLINK_WINE_NO_PATCH"))
		return;
	patch_export("ntdll.dll", "NtSetInformationFile", (void *)hl_nt_set_info_file,
		     (void **)&real_nt_set_info_file);
	if (!env_set("HOSTLINK_WINE_REAL_SYMLINK_STUB"))
		patch_export("kernel32.dll", "CreateSymbolicLinkW", (void *)hl_create_symlink_w, NULL);
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
	(void)reserved;
	if (reason == DLL_PROCESS_ATTACH) {
		DisableThreadLibraryCalls(inst);
		apply_patches();
	}
	return TRUE;
}
