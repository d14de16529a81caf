// strata import MODEL.onnx [-o FILE] [--shape NAME=D0xD1x...] [--value NAME=FILE]: prints the
// imported graph IR (at the given input shapes, when a model's shape arithmetic folds only at
// known sizes, and with the given values of inputs the importer needs as constants).
#include "Commands.h"

#include "strata/graph/Printer.h"

namespace strata::cli {

Action addImportCommand(CLI::App &app) {
  struct Opts {
    std::string model, output;
    std::vector<std::string> shapes, values;
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
  addShapeOption(cmd, opts->shapes);
  addValueOption(cmd, opts->values);
  return [opts]() {
    auto shapes = parseShapeHints(opts->shapes);
    if (!shapes)
      return fail(kUsage, llvm::toString(shapes.takeError()));
    auto values = parseValueHints(opts->values);
    if (!values)
      return fail(kUsage, llvm::toString(values.takeError()));
    auto graph = shapes->empty() && values->empty()
                     ? loadModel(opts->model)
                     : loadModelAtShapes(opts->model, *shapes, nullptr, *values);
    if (!graph)
      return failedCode();
    PrintOptions po;
    po.emitBlobs = opts->emitBlobs;
    po.printLocations = opts->locations;
    return writeTextOutput(opts->output, printGraph(*graph, po)) ? kOk : failedCode();
  };
}

} // namespace strata::cli
