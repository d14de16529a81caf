// NumPy .npy read/write (format versions 1-3, little endian, C order).
#pragma once
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

namespace strata {

llvm::Expected<Tensor> readNpy(const std::string &path);
// Writes atomically (temporary file renamed into place) so a failure leaves no partial file.
llvm::Error writeNpy(const std::string &path, const Tensor &t);

} // namespace strata
