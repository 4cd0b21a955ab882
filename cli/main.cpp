// scalescope: the command-line entry point; parses options and hands off to one subcommand.
#include <iostream>

#include "cli_common.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "scalescope: predict how a training job scales on a multi-GPU cluster.\n"
      "Data goes to stdout, logs and progress to stderr. Exit 0 ok, 1 runtime failure, 2 bad input.",
      "scalescope"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "scalescope 0.1.0");

  scalescope::cli::Context ctx;
  scalescope::cli::register_collective(app, ctx);
  scalescope::cli::register_simulate(app, ctx);
  scalescope::cli::register_validate(app, ctx);
  scalescope::cli::register_validate_planner(app, ctx);
  scalescope::cli::register_import(app, ctx);
  scalescope::cli::register_calibrate(app, ctx);
  scalescope::cli::register_plan(app, ctx);
  scalescope::cli::register_scaling(app, ctx);
  scalescope::cli::register_capacity(app, ctx);
  scalescope::cli::register_sweep(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help, version or the parse error
    return rc == 0 ? 0 : 2;
  }
  return ctx.exit_code;
}
