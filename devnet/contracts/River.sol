// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Shared.sol";

/// @title RiverBase (devnet): the LsETH token and the protocol's ETH accounting, common to every version
/// @notice Shares-based ERC20. U (totalUnderlyingSupply) = balanceToDeposit + balanceToRedeem
///         + last reported validators balance + 32 ETH for every deposited validator not yet seen by the
///         oracle. S (totalSupply) = shares. Balances are shares; the conversion rate is U / S.
///         Integer math and events follow the mainnet contracts (PROTOCOL.md).
/// @dev Every River version (RiverV0_4, RiverV0_5, RiverV1_0, RiverV1_2) inherits this contract and declares no
///      storage of its own, so a proxy upgraded from one version to the next keeps its state.
abstract contract RiverBase is Initializable {
    // ---- ERC20 / LsETH events
    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event UserDeposit(address indexed depositor, address indexed recipient, uint256 amount);
    // ---- fee and report events (mainnet signatures)
    event SetAdmin(address indexed admin);
    event SetGlobalFee(uint256 fee);
    event SetCollector(address indexed collector);
    event RewardsEarned(
        address indexed collector,
        uint256 oldTotalUnderlyingBalance,
        uint256 oldTotalSupply,
        uint256 newTotalUnderlyingBalance,
        uint256 newTotalSupply
    );
    event PulledELFees(uint256 amount);
    event ConsensusLayerDataUpdate(uint256 validatorCount, uint256 validatorTotalBalance, bytes32 roundId);

    error Unauthorized(address caller);
    error Denied(address account);
    error InvalidZeroAddress();
    error EmptyDeposit();
    error ZeroMintedShares();
    error NullTransfer();
    error BalanceTooLow();
    error AllowanceTooLow();
    error InvalidFee();
    error NotEnoughFunds();

    /// @notice The last report as stored (mainnet IOracleManagerV1.StoredConsensusLayerReport). The 0.4 / 0.5
    ///         versions keep their report (epoch, balance, count) in the same fields.
    struct StoredConsensusLayerReport {
        uint256 epoch;
        uint256 validatorsBalance;
        uint256 validatorsSkimmedBalance;
        uint256 validatorsExitedBalance;
        uint256 validatorsExitingBalance;
        uint32 validatorsCount;
        bool rebalanceDepositToRedeemMode;
        bool slashingContainmentMode;
    }

    /// @notice Addresses wired at initialization (redeemManager: zero before the 1.0 upgrade).
    struct Config {
        address allowlist;
        address redeemManager;
        address operatorsRegistry;
        address oracle;
        address elFeeRecipient;
        address withdraw;
        address depositContract;
        address collector;
        address keeper;
        uint256 globalFee;
    }

    string public constant name = "Liquid Staked ETH";
    string public constant symbol = "LsETH";
    uint8 public constant decimals = 18;
    uint256 public constant DEPOSIT_SIZE = 32 ether;
    uint256 internal constant BASIS_POINTS_MAX = 10_000;

    address internal admin;
    Config internal config;

    uint256 internal totalShares;
    mapping(address => uint256) internal shares;
    mapping(address => mapping(address => uint256)) internal allowances;

    uint256 internal balanceToDeposit;
    uint256 internal balanceToRedeem;
    uint256 internal depositedValidatorCount;
    StoredConsensusLayerReport internal lastReport;

    modifier onlyAdmin() {
        if (msg.sender != admin) revert Unauthorized(msg.sender);
        _;
    }

    /// @notice Sets the admin, wires the protocol contracts and sets the initial fee (initializer version 0).
    function initialize(address admin_, Config calldata config_) external init(0) {
        if (
            admin_ == address(0) || config_.allowlist == address(0) || config_.operatorsRegistry == address(0)
                || config_.oracle == address(0) || config_.elFeeRecipient == address(0)
                || config_.withdraw == address(0) || config_.depositContract == address(0)
                || config_.collector == address(0) || config_.keeper == address(0)
        ) revert InvalidZeroAddress();
        if (config_.globalFee > BASIS_POINTS_MAX) revert InvalidFee();
        admin = admin_;
        config = config_;
        emit SetAdmin(admin_);
        emit SetCollector(config_.collector);
        emit SetGlobalFee(config_.globalFee);
    }

    // ------------------------------------------------------------------ ERC20 over shares

    function totalSupply() external view returns (uint256) {
        return totalShares;
    }

    function balanceOf(address owner) external view returns (uint256) {
        return shares[owner];
    }

    function allowance(address owner, address spender) external view returns (uint256) {
        return allowances[owner][spender];
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowances[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowances[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < value) revert AllowanceTooLow();
            allowances[from][msg.sender] = allowed - value;
            emit Approval(from, msg.sender, allowed - value);
        }
        _transfer(from, to, value);
        return true;
    }

    // ------------------------------------------------------------------ conversion views

    function totalUnderlyingSupply() external view returns (uint256) {
        return _assetBalance();
    }

    function balanceOfUnderlying(address owner) external view returns (uint256) {
        return _balanceFromShares(shares[owner]);
    }

    /// @notice floor(shares * U / S), 0 when S = 0.
    function underlyingBalanceFromShares(uint256 shareAmount) external view returns (uint256) {
        return _balanceFromShares(shareAmount);
    }

    /// @notice floor(underlying * S / U), 0 when U = 0.
    function sharesFromUnderlyingBalance(uint256 underlyingBalance) external view returns (uint256) {
        return _sharesFromBalance(underlyingBalance);
    }

    // ------------------------------------------------------------------ deposits

    /// @notice Deposits msg.value for the sender (needs DEPOSIT). Mints floor(a * S / U), 1:1 on an empty pool.
    function deposit() external payable {
        _deposit(msg.sender, msg.sender);
    }

    /// @notice Deposits msg.value and mints the shares to `recipient` (sender needs DEPOSIT, recipient not denied).
    function depositAndTransfer(address recipient) external payable {
        if (recipient == address(0)) revert InvalidZeroAddress();
        _deposit(msg.sender, recipient);
    }

    /// @notice Sends 32 ETH per validator from the deposit buffer to the deposit contract (keeper or admin).
    function depositToConsensusLayer(uint256 validatorCount) external {
        if (msg.sender != config.keeper && msg.sender != admin) revert Unauthorized(msg.sender);
        uint256 amount = validatorCount * DEPOSIT_SIZE;
        if (validatorCount == 0 || amount > balanceToDeposit) revert NotEnoughFunds();
        IOperatorsRegistry(config.operatorsRegistry).fundValidators(validatorCount);
        _setBalanceToDeposit(balanceToDeposit - amount);
        uint256 previous = depositedValidatorCount;
        depositedValidatorCount = previous + validatorCount;
        _onDepositedValidatorCount(previous, previous + validatorCount);
        IDepositContract(config.depositContract).deposit{value: amount}(validatorCount);
    }

    // ------------------------------------------------------------------ fee and admin

    function getAdmin() external view returns (address) {
        return admin;
    }

    function getGlobalFee() external view returns (uint256) {
        return config.globalFee;
    }

    function setGlobalFee(uint256 fee) external onlyAdmin {
        if (fee > BASIS_POINTS_MAX) revert InvalidFee();
        config.globalFee = fee;
        emit SetGlobalFee(fee);
    }

    function setCollector(address collector) external onlyAdmin {
        if (collector == address(0)) revert InvalidZeroAddress();
        config.collector = collector;
        emit SetCollector(collector);
    }

    /// @notice EL fees, only from the EL fee recipient.
    function sendELFees() external payable {
        if (msg.sender != config.elFeeRecipient) revert Unauthorized(msg.sender);
    }

    // ------------------------------------------------------------------ views for tools and tests

    function getAllowlist() external view returns (address) {
        return config.allowlist;
    }

    function getOperatorsRegistry() external view returns (address) {
        return config.operatorsRegistry;
    }

    function getOracle() external view returns (address) {
        return config.oracle;
    }

    function getCollector() external view returns (address) {
        return config.collector;
    }

    function getELFeeRecipient() external view returns (address) {
        return config.elFeeRecipient;
    }

    function getWithdraw() external view returns (address) {
        return config.withdraw;
    }

    function getBalanceToDeposit() external view returns (uint256) {
        return balanceToDeposit;
    }

    function getDepositedValidatorCount() external view returns (uint256) {
        return depositedValidatorCount;
    }

    function getCLValidatorCount() external view returns (uint256) {
        return lastReport.validatorsCount;
    }

    function getCLValidatorTotalBalance() external view returns (uint256) {
        return lastReport.validatorsBalance;
    }

    // ------------------------------------------------------------------ internals

    /// @dev Version hooks: the 1.x versions emit SetBalanceToDeposit / SetDepositedValidatorCount, 0.4 / 0.5 did not.
    function _onBalanceToDeposit(uint256 oldAmount, uint256 newAmount) internal virtual {}

    function _onDepositedValidatorCount(uint256 oldCount, uint256 newCount) internal virtual {}

    function _assetBalance() internal view returns (uint256) {
        uint256 seen = lastReport.validatorsCount;
        uint256 inFlight = depositedValidatorCount > seen ? (depositedValidatorCount - seen) * DEPOSIT_SIZE : 0;
        return lastReport.validatorsBalance + balanceToDeposit + balanceToRedeem + inFlight;
    }

    function _balanceFromShares(uint256 shareAmount) internal view returns (uint256) {
        uint256 supply = totalShares;
        if (supply == 0) return 0;
        return (shareAmount * _assetBalance()) / supply;
    }

    function _sharesFromBalance(uint256 balance) internal view returns (uint256) {
        uint256 assets = _assetBalance();
        if (assets == 0) return 0;
        return (balance * totalShares) / assets;
    }

    function _deposit(address depositor, address recipient) internal {
        if (msg.value == 0) revert EmptyDeposit();
        IAllowlist allowlist = IAllowlist(config.allowlist);
        if (allowlist.isDenied(depositor)) revert Denied(depositor);
        if (!allowlist.isAllowed(depositor, Masks.DEPOSIT)) revert Unauthorized(depositor);
        if (recipient != depositor && allowlist.isDenied(recipient)) revert Denied(recipient);
        uint256 assetsBefore = _assetBalance();
        uint256 minted = assetsBefore == 0 ? msg.value : (msg.value * totalShares) / assetsBefore;
        if (minted == 0) revert ZeroMintedShares();
        _setBalanceToDeposit(balanceToDeposit + msg.value);
        _mint(recipient, minted);
        emit UserDeposit(depositor, recipient, msg.value);
    }

    function _transfer(address from, address to, uint256 value) internal {
        if (to == address(0)) revert InvalidZeroAddress();
        if (value == 0) revert NullTransfer();
        IAllowlist allowlist = IAllowlist(config.allowlist);
        if (allowlist.isDenied(from)) revert Denied(from);
        if (allowlist.isDenied(to)) revert Denied(to);
        uint256 fromShares = shares[from];
        if (fromShares < value) revert BalanceTooLow();
        unchecked {
            shares[from] = fromShares - value;
        }
        shares[to] += value;
        emit Transfer(from, to, value);
    }

    function _mint(address to, uint256 value) internal {
        totalShares += value;
        shares[to] += value;
        emit Transfer(address(0), to, value);
    }

    function _burn(address from, uint256 value) internal {
        shares[from] -= value;
        totalShares -= value;
        emit Transfer(from, address(0), value);
    }

    function _setBalanceToDeposit(uint256 newAmount) internal {
        _onBalanceToDeposit(balanceToDeposit, newAmount);
        balanceToDeposit = newAmount;
    }

    /// @dev EL fees (at most `max`) join the deposit buffer; emits PulledELFees (also when 0).
    function _pullELFees(uint256 max) internal returns (uint256 collected) {
        uint256 before = address(this).balance;
        IELFeeRecipient(config.elFeeRecipient).pullELFees(max);
        collected = address(this).balance - before;
        if (collected > 0) _setBalanceToDeposit(balanceToDeposit + collected);
        emit PulledELFees(collected);
    }

    /// @dev Fee mint: sharesToMint = floor(r * S0 * f / (Unew * 10000 - r * f)), so the collector holds
    ///      f / 10000 of the rewards' value at the post-report rate.
    function _onEarnings(uint256 rewards) internal {
        uint256 oldTotalSupply = totalShares;
        if (oldTotalSupply == 0) return;
        uint256 newTotalBalance = _assetBalance();
        uint256 fee = config.globalFee;
        uint256 denominator = newTotalBalance * BASIS_POINTS_MAX - rewards * fee;
        uint256 sharesToMint = denominator == 0 ? 0 : (rewards * oldTotalSupply * fee) / denominator;
        if (sharesToMint > 0) {
            _mint(config.collector, sharesToMint);
            emit RewardsEarned(
                config.collector, newTotalBalance - rewards, oldTotalSupply, newTotalBalance, totalShares
            );
        }
    }
}

/// @title River 0.4.0 shape (devnet): the pre-Shanghai River
/// @notice The Oracle reports `setConsensusLayerData(validatorCount, validatorTotalBalance, roundId, maxIncrease)`;
///         River pulls EL fees up to the margin `maxIncrease` leaves, mints the fee on
///         rewards = new balance + EL fees - (previous balance + 32 ETH x newly seen validators) when positive,
///         and emits ConsensusLayerDataUpdate. No withdrawals, no redemptions, no exits.
contract RiverV0_4 is RiverBase {
    error InvalidValidatorCountReport(uint256 reported, uint256 deposited, uint256 lastReported);
    error InvalidEpoch(uint256 epoch);

    /// @notice Applies one report (only the Oracle); roundId is the report's epoch as bytes32.
    function setConsensusLayerData(
        uint256 validatorCount,
        uint256 validatorTotalBalance,
        bytes32 roundId,
        uint256 maxIncrease
    ) external {
        if (msg.sender != config.oracle) revert Unauthorized(msg.sender);
        StoredConsensusLayerReport memory last = lastReport;
        if (validatorCount > depositedValidatorCount || validatorCount < last.validatorsCount) {
            revert InvalidValidatorCountReport(validatorCount, depositedValidatorCount, last.validatorsCount);
        }
        if (uint256(roundId) <= last.epoch) revert InvalidEpoch(uint256(roundId));
        uint256 previousValidatorsBalance =
            last.validatorsBalance + (validatorCount - last.validatorsCount) * DEPOSIT_SIZE;
        lastReport.epoch = uint256(roundId);
        lastReport.validatorsBalance = validatorTotalBalance;
        lastReport.validatorsCount = uint32(validatorCount);

        uint256 elFees;
        // EL fees are pulled only within the margin the report leaves under maxIncrease
        if (maxIncrease + previousValidatorsBalance > validatorTotalBalance) {
            elFees = _pullELFees(maxIncrease + previousValidatorsBalance - validatorTotalBalance);
        }
        if (validatorTotalBalance + elFees > previousValidatorsBalance) {
            _onEarnings(validatorTotalBalance + elFees - previousValidatorsBalance);
        }
        emit ConsensusLayerDataUpdate(validatorCount, validatorTotalBalance, roundId);
    }
}

/// @title River 0.5.0 shape (devnet): 0.4.0 plus the coverage fund's declarations (no coverage fund on the devnet)
contract RiverV0_5 is RiverV0_4 {
    event PulledCoverageFunds(uint256 amount);

    /// @notice Always the zero address: the devnet has no coverage fund.
    function getCoverageFund() external pure returns (address) {
        return address(0);
    }
}

/// @title River 1.0.0 shape (devnet): withdrawals, redemptions and the struct report
/// @notice The report is `setConsensusLayerData(ConsensusLayerReport)` from the Oracle, emitting
///         ProcessedConsensusLayerReport (the steps are in devnet/README.md).
contract RiverV1_0 is RiverBase {
    event PulledCoverageFunds(uint256 amount);
    event PulledRedeemManagerExceedingEth(uint256 amount);
    event PulledCLFunds(uint256 pulledSkimmedEthAmount, uint256 pullExitedEthAmount);
    event ReportedRedeemManager(
        uint256 redeemManagerDemand, uint256 suppliedRedeemManagerDemand, uint256 suppliedRedeemManagerDemandInEth
    );
    event SetBalanceToDeposit(uint256 oldAmount, uint256 newAmount);
    event SetBalanceToRedeem(uint256 oldAmount, uint256 newAmount);
    event SetDepositedValidatorCount(uint256 oldDepositedValidatorCount, uint256 newDepositedValidatorCount);
    event SetRedeemManager(address redeemManager);
    event ProcessedConsensusLayerReport(ConsensusLayerReport report, ConsensusLayerDataReportingTrace trace);

    error InvalidEpoch(uint256 epoch);
    error InvalidValidatorCountReport(uint256 reported, uint256 deposited, uint256 lastReported);
    error InvalidDecreasingValidatorsSkimmedBalance(uint256 last, uint256 reported);
    error InvalidDecreasingValidatorsExitedBalance(uint256 last, uint256 reported);
    error InvalidPulledClFundsAmount(uint256 requested, uint256 received);

    /// @notice The 1.0 upgrade's initializer (version 1): wires the RedeemManager. Mainnet's signature; the
    ///         devnet ignores every argument but the first (no report bounds, no daily committable limits).
    function initRiverV1_1(
        address redeemManager,
        uint64,
        uint64,
        uint64,
        uint64,
        uint64,
        uint256,
        uint256,
        uint128,
        uint128
    ) external init(1) {
        if (redeemManager == address(0)) revert InvalidZeroAddress();
        config.redeemManager = redeemManager;
        emit SetRedeemManager(redeemManager);
    }

    // ------------------------------------------------------------------ redemptions

    /// @notice Queues a redeem request (sender needs REDEEM, recipient not denied): transfers the shares
    ///         sender -> River -> RedeemManager, which records the request at the current rate.
    function requestRedeem(uint256 lsEthAmount, address recipient) external returns (uint32 redeemRequestId) {
        IAllowlist allowlist = IAllowlist(config.allowlist);
        if (allowlist.isDenied(msg.sender)) revert Denied(msg.sender);
        if (!allowlist.isAllowed(msg.sender, Masks.REDEEM)) revert Unauthorized(msg.sender);
        if (recipient == address(0)) revert InvalidZeroAddress();
        if (allowlist.isDenied(recipient)) revert Denied(recipient);
        _transfer(msg.sender, address(this), lsEthAmount);
        _transfer(address(this), config.redeemManager, lsEthAmount);
        return IRedeemManager(config.redeemManager).requestRedeem(lsEthAmount, recipient);
    }

    /// @notice Claims satisfied redeem requests through the RedeemManager (ETH goes to each request's recipient).
    function claimRedeemRequests(uint32[] calldata redeemRequestIds, uint32[] calldata withdrawalEventIds)
        external
        returns (uint8[] memory claimStatuses)
    {
        return IRedeemManager(config.redeemManager).claimRedeemRequests(
            redeemRequestIds, withdrawalEventIds, true, type(uint16).max
        );
    }

    function resolveRedeemRequests(uint32[] calldata redeemRequestIds) external view returns (int64[] memory) {
        return IRedeemManager(config.redeemManager).resolveRedeemRequests(redeemRequestIds);
    }

    // ------------------------------------------------------------------ ETH inputs (only from their source)

    function sendCLFunds() external payable {
        if (msg.sender != config.withdraw) revert Unauthorized(msg.sender);
    }

    function sendRedeemManagerExceedingFunds() external payable {
        if (msg.sender != config.redeemManager) revert Unauthorized(msg.sender);
    }

    // ------------------------------------------------------------------ views

    function getRedeemManager() external view returns (address) {
        return config.redeemManager;
    }

    function getKeeper() external view returns (address) {
        return config.keeper;
    }

    function getBalanceToRedeem() external view returns (uint256) {
        return balanceToRedeem;
    }

    function getLastConsensusLayerReport() external view returns (StoredConsensusLayerReport memory) {
        return lastReport;
    }

    // ------------------------------------------------------------------ oracle report

    /// @notice Applies one oracle report (only the Oracle contract). Steps, as on mainnet: pull skimmed and
    ///         exited ETH, pull EL fees, pull the RedeemManager's exceeding ETH, mint the fee on the rewards,
    ///         request validator exits for the unmet redeem demand, report a withdrawal event to the
    ///         RedeemManager from the redeem buffer, then emit ProcessedConsensusLayerReport.
    function setConsensusLayerData(ConsensusLayerReport calldata report) external {
        if (msg.sender != config.oracle) revert Unauthorized(msg.sender);
        StoredConsensusLayerReport memory last = lastReport;
        if (report.epoch <= last.epoch) revert InvalidEpoch(report.epoch);
        if (report.validatorsCount > depositedValidatorCount || report.validatorsCount < last.validatorsCount) {
            revert InvalidValidatorCountReport(report.validatorsCount, depositedValidatorCount, last.validatorsCount);
        }
        if (report.validatorsSkimmedBalance < last.validatorsSkimmedBalance) {
            revert InvalidDecreasingValidatorsSkimmedBalance(
                last.validatorsSkimmedBalance, report.validatorsSkimmedBalance
            );
        }
        if (report.validatorsExitedBalance < last.validatorsExitedBalance) {
            revert InvalidDecreasingValidatorsExitedBalance(last.validatorsExitedBalance, report.validatorsExitedBalance);
        }

        ConsensusLayerDataReportingTrace memory trace;
        uint256 skimmedIncrease = report.validatorsSkimmedBalance - last.validatorsSkimmedBalance;
        uint256 exitedIncrease = report.validatorsExitedBalance - last.validatorsExitedBalance;
        // validators first seen by this report were funded with 32 ETH each
        uint256 previousValidatorsBalance =
            last.validatorsBalance + uint256(report.validatorsCount - last.validatorsCount) * DEPOSIT_SIZE;

        lastReport = StoredConsensusLayerReport({
            epoch: report.epoch,
            validatorsBalance: report.validatorsBalance,
            validatorsSkimmedBalance: report.validatorsSkimmedBalance,
            validatorsExitedBalance: report.validatorsExitedBalance,
            validatorsExitingBalance: report.validatorsExitingBalance,
            validatorsCount: report.validatorsCount,
            rebalanceDepositToRedeemMode: report.rebalanceDepositToRedeemMode,
            slashingContainmentMode: report.slashingContainmentMode
        });
        IOperatorsRegistry(config.operatorsRegistry).reportStoppedValidatorCounts(
            report.stoppedValidatorCountPerOperator, depositedValidatorCount
        );

        _pullCLFunds(skimmedIncrease, exitedIncrease);
        trace.pulledELFees = _pullELFees(type(uint256).max);
        trace.pulledRedeemManagerExceedingEthBuffer = _pullRedeemManagerExceedingEth();
        // no coverage fund on the devnet: trace.pulledCoverageFunds stays 0

        uint256 consensusLayerAndFees =
            report.validatorsBalance + skimmedIncrease + exitedIncrease + trace.pulledELFees;
        if (consensusLayerAndFees > previousValidatorsBalance) {
            trace.rewards = consensusLayerAndFees - previousValidatorsBalance;
            _onEarnings(trace.rewards);
        }

        _requestExitsBasedOnRedeemDemand(report);
        _reportWithdrawToRedeemManager();
        _skimExcessBalanceToRedeem();

        emit ProcessedConsensusLayerReport(report, trace);
    }

    // ------------------------------------------------------------------ internals

    function _onBalanceToDeposit(uint256 oldAmount, uint256 newAmount) internal override {
        emit SetBalanceToDeposit(oldAmount, newAmount);
    }

    function _onDepositedValidatorCount(uint256 oldCount, uint256 newCount) internal override {
        emit SetDepositedValidatorCount(oldCount, newCount);
    }

    function _setBalanceToRedeem(uint256 newAmount) internal {
        emit SetBalanceToRedeem(balanceToRedeem, newAmount);
        balanceToRedeem = newAmount;
    }

    /// @dev Skimmed ETH joins the deposit buffer, exited ETH the redeem buffer (as on mainnet).
    function _pullCLFunds(uint256 skimmedAmount, uint256 exitedAmount) internal {
        uint256 total = skimmedAmount + exitedAmount;
        if (total == 0) return;
        uint256 before = address(this).balance;
        IWithdraw(config.withdraw).pullEth(total);
        uint256 received = address(this).balance - before;
        if (received != total) revert InvalidPulledClFundsAmount(total, received);
        if (skimmedAmount > 0) _setBalanceToDeposit(balanceToDeposit + skimmedAmount);
        if (exitedAmount > 0) _setBalanceToRedeem(balanceToRedeem + exitedAmount);
        emit PulledCLFunds(skimmedAmount, exitedAmount);
    }

    /// @dev The RedeemManager's exceeding ETH joins the redeem buffer (raises U, not a reward).
    function _pullRedeemManagerExceedingEth() internal returns (uint256 collected) {
        uint256 before = address(this).balance;
        IRedeemManager(config.redeemManager).pullExceedingEth(type(uint256).max);
        collected = address(this).balance - before;
        if (collected > 0) {
            _setBalanceToRedeem(balanceToRedeem + collected);
            emit PulledRedeemManagerExceedingEth(collected);
        }
    }

    /// @dev Optionally moves deposit buffer to the redeem buffer, then asks operators to exit
    ///      ceil(shortfall / 32 ETH) validators, shortfall = demand in ETH - (redeem buffer + exiting balance
    ///      + exits requested but not yet stopped * 32 ETH). Nothing is requested in slashing containment mode.
    function _requestExitsBasedOnRedeemDemand(ConsensusLayerReport calldata report) internal {
        uint256 demandInEth = _balanceFromShares(IRedeemManager(config.redeemManager).getRedeemDemand());
        if (report.rebalanceDepositToRedeemMode && balanceToRedeem < demandInEth) {
            uint256 moved = demandInEth - balanceToRedeem;
            if (moved > balanceToDeposit) moved = balanceToDeposit;
            if (moved > 0) {
                _setBalanceToDeposit(balanceToDeposit - moved);
                _setBalanceToRedeem(balanceToRedeem + moved);
            }
        }
        if (report.slashingContainmentMode) return;
        IOperatorsRegistry registry = IOperatorsRegistry(config.operatorsRegistry);
        (uint32 totalStopped, uint256 totalRequested) = registry.getStoppedAndRequestedExitCounts();
        uint256 preExitingBalance = (totalRequested > totalStopped ? totalRequested - totalStopped : 0) * DEPOSIT_SIZE;
        uint256 covered = balanceToRedeem + report.validatorsExitingBalance + preExitingBalance;
        if (covered < demandInEth) {
            uint256 shortfall = demandInEth - covered;
            registry.demandValidatorExits((shortfall + DEPOSIT_SIZE - 1) / DEPOSIT_SIZE, depositedValidatorCount);
        }
    }

    /// @dev Reports a withdrawal event covering as much redeem demand as the redeem buffer pays at the
    ///      post-fee rate, burning the RedeemManager's matching shares.
    function _reportWithdrawToRedeemManager() internal {
        IRedeemManager redeemManager = IRedeemManager(config.redeemManager);
        uint256 demand = redeemManager.getRedeemDemand();
        if (demand == 0 || totalShares == 0) return;
        uint256 supplied = demand;
        uint256 suppliedInEth = _balanceFromShares(demand);
        if (suppliedInEth > balanceToRedeem) {
            suppliedInEth = balanceToRedeem;
            supplied = _sharesFromBalance(suppliedInEth);
        }
        emit ReportedRedeemManager(demand, supplied, suppliedInEth);
        if (supplied == 0 || suppliedInEth == 0) return;
        _setBalanceToRedeem(balanceToRedeem - suppliedInEth);
        _burn(config.redeemManager, supplied);
        redeemManager.reportWithdraw{value: suppliedInEth}(supplied);
    }

    /// @dev With no redeem demand left, the redeem buffer returns to the deposit buffer.
    function _skimExcessBalanceToRedeem() internal {
        if (balanceToRedeem == 0) return;
        if (IRedeemManager(config.redeemManager).getRedeemDemand() != 0) return;
        uint256 amount = balanceToRedeem;
        _setBalanceToRedeem(0);
        _setBalanceToDeposit(balanceToDeposit + amount);
    }
}

/// @title River 1.2.1 shape (devnet): 1.0.0's behaviour with 1.2's initializer and version()
contract RiverV1_2 is RiverV1_0 {
    /// @notice The 1.2 upgrade's initializer (version 2); nothing to migrate on the devnet.
    function initRiverV1_2() external init(2) {}

    function version() external pure returns (string memory) {
        return "1.2.1";
    }
}
