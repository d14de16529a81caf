// strata import MODEL.onnx [-o FILE]: prints the imported graph IR.
#include "Commands.h"

#include "strata/graph/Printer.h"

namespace strata::cli {

Action addImportCommand(CLI::App &app) {
  struct Opts {
    std::string model, output;
    bool emitBlobs = false, locations = false;
  };
  auto opts = std::make_shared<Opts>();
  CLI::App *cmd = app.add_subcommand("import", "Import an ONNX model and print its graph IR");
  addLimitOption(cmd);
  cmd->add_option("model", opts->model, "ONNX model file")->required();
  cmd->add_option("-o,--output", opts->output, "Write the IR here instead of stdout");
  cmd->add_flag("--emit-blobs", opts->emitBlobs,
                "Append the data of large constants so the text re-parses into a runnable graph");
  cmd->add_flag("--print-locations", opts->locations, "Print each op's ONNX node name");
  return [opts]() {
    auto graph = loadModel(opts->model);
    if (!graph)
      return failedCode();
    PrintOptions po;
    po.emitBlobs = opts->emitBlobs;
    po.printLocations = opts->locations;
    return writeTextOutput(opts->output, printGraph(*graph, po)) ? kOk : failedCode();
  };
}

} // namespace strata::cli
