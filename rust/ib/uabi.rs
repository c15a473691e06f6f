// SPDX-License-Identifier: GPL-2.0

//! The rxe user ABI (`include/uapi/rdma/rdma_user_rxe.h`, `ib_user_verbs.h`) checked at build
//! time: the layouts `proto` encodes and decodes by hand must match the target kernel's headers,
//! field by field. A mismatch fails the build.

use crate::{
    bindings,
    proto::abi, //
};
use core::mem::{
    offset_of,
    size_of, //
};

const _: () = {
    // Responses of the create/resize commands librxe reads.
    assert!(size_of::<bindings::mminfo>() == 16);
    assert!(size_of::<bindings::rxe_create_cq_resp>() == 16);
    assert!(size_of::<bindings::rxe_resize_cq_resp>() == 16);
    assert!(size_of::<bindings::rxe_create_qp_resp>() == 32);
    assert!(offset_of!(bindings::rxe_create_qp_resp, rq_mi) == 0);
    assert!(offset_of!(bindings::rxe_create_qp_resp, sq_mi) == 16);
    assert!(size_of::<bindings::rxe_create_srq_resp>() == 24);
    assert!(offset_of!(bindings::rxe_create_srq_resp, srq_num) == 16);
    assert!(size_of::<bindings::rxe_modify_srq_cmd>() == 8);
    assert!(size_of::<bindings::rxe_create_ah_resp>() == 8);

    // The ring header (`struct rxe_queue_buf`).
    assert!(offset_of!(bindings::rxe_queue_buf, log2_elem_size) == abi::HDR_LOG2_ELEM_SIZE);
    assert!(offset_of!(bindings::rxe_queue_buf, index_mask) == abi::HDR_INDEX_MASK);
    assert!(offset_of!(bindings::rxe_queue_buf, producer_index) == abi::HDR_PRODUCER);
    assert!(offset_of!(bindings::rxe_queue_buf, consumer_index) == abi::HDR_CONSUMER);
    assert!(offset_of!(bindings::rxe_queue_buf, data) == abi::HDR_LEN);

    // Work queue entries and completions.
    assert!(size_of::<bindings::rxe_send_wqe>() == abi::SEND_WQE_HDR_LEN);
    assert!(offset_of!(bindings::rxe_send_wqe, iova) == abi::OFF_IOVA);
    assert!(
        offset_of!(bindings::rxe_send_wqe, dma) + offset_of!(bindings::rxe_dma_info, length)
            == abi::OFF_DMA_LENGTH
    );
    assert!(
        offset_of!(bindings::rxe_send_wqe, dma) + offset_of!(bindings::rxe_dma_info, num_sge)
            == abi::OFF_DMA_NUM_SGE
    );
    assert!(offset_of!(bindings::rxe_send_wr, opcode) == abi::OFF_OPCODE);
    assert!(offset_of!(bindings::rxe_send_wr, send_flags) == abi::OFF_SEND_FLAGS);
    assert!(size_of::<bindings::rxe_recv_wqe>() == abi::RECV_WQE_HDR_LEN);
    assert!(
        offset_of!(bindings::rxe_recv_wqe, dma) + offset_of!(bindings::rxe_dma_info, num_sge)
            == abi::OFF_RECV_DMA_NUM_SGE
    );
    assert!(size_of::<bindings::rxe_sge>() == abi::SGE_LEN);
    assert!(size_of::<bindings::ib_uverbs_wc>() == abi::CQE_LEN);
    assert!(offset_of!(bindings::ib_uverbs_wc, wc_flags) == 36);
    assert!(offset_of!(bindings::ib_uverbs_wc, port_num) == 46);
};
