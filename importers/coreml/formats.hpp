// The two model kinds the importer reads, each turned into a graph by its own driver:
// nn_importer.cpp (NeuralNetwork and its classifier / regressor) and mil_importer.cpp (ML
// Program). importer.cpp picks one by the model's kind.
#pragma once

#include "model_file.hpp"
#include "nnvm/importers/support_report.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

graph::Graph import_neural_network(const ModelFile& f, const ImportOptions& options);
graph::Graph import_ml_program(const ModelFile& f, const ImportOptions& options);

// What each driver cannot import, added to `r` (its op counts too).
void report_neural_network(const ModelFile& f, importers::SupportReport& r);
void report_ml_program(const ModelFile& f, importers::SupportReport& r);

}  // namespace coreml_import
NNVM_END_NAMESPACE
