#include "cli_run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace parley::test {

Run run(const std::string& args, const std::string& stdin_text) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string in = (dir / ("parley-cli-in-" + std::to_string(::getpid()))).string();
  const std::string err = (dir / ("parley-cli-err-" + std::to_string(::getpid()))).string();
  std::ofstream(in) << stdin_text;
  const std::string cmd = kBin + " " + args + " <" + in + " 2>" + err;
  Run r{};
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(err);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  std::filesystem::remove(in);
  std::filesystem::remove(err);
  return r;
}

}  // namespace parley::test
