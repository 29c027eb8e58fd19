#include "backends/runtime/CompiledKernel.h"

namespace aicf {
namespace runtime {

CompiledKernel::CompiledKernel(std::shared_ptr<const lowering::LoweredKernel> ir,
                               std::function<std::string()> make_ptx)
    : ir_(std::move(ir)), ptx_(std::make_shared<LazyPTX>()) {
    ptx_->make = std::move(make_ptx);
}

const std::string &CompiledKernel::ptx() const {
    LazyPTX &p = *ptx_;
    std::call_once(p.made, [&p] { p.text = p.make(); });
    return p.text;
}

} // namespace runtime
} // namespace aicf
