// parley: load, run and (later) serve LLMs. Each subcommand lives in its own file.
#include <iostream>

#include "cli/commands.h"
#include "util/error.h"

int main(int argc, char** argv) {
  CLI::App app{"parley: a CPU inference engine and chat server for LLMs (GGUF, llama2.c)"};
  app.require_subcommand(1);
  parley::add_generate_command(app);
  parley::add_chat_command(app);
  parley::add_tokenize_command(app);
  parley::add_template_command(app);
  parley::add_info_command(app);
  parley::add_mkmodel_command(app);
  parley::add_quantize_command(app);
  parley::add_convert_command(app);
  parley::add_eval_command(app);
  parley::add_bench_command(app);
  parley::add_bench_serve_command(app);
  parley::add_serve_command(app);
  parley::add_loadtest_command(app);
  parley::add_mkadapter_command(app);
  parley::add_lora_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const parley::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
