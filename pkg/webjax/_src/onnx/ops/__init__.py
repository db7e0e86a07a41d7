"""The ONNX operators, grouped by what they are; importing a module registers its operators."""
